import { parse } from 'yaml';

/** `name` as a YAML scalar that reads back as this string: plain when it can be, else quoted. */
function yamlString(name: string): string {
  try {
    if (/^[\w.-]+$/.test(name) && parse(name) === name) return name;
  } catch {
    // not plain-safe
  }
  return JSON.stringify(name); // a JSON string is a valid YAML double-quoted scalar
}

/** The npm package's name: `mockapi` on the registry is an unrelated package; the bin is still `mockapi`. */
export const PACKAGE_NAME = 'mockapi-cli';

/** Where editors find the schema, relative to the config file, when mockapi is installed in the project. */
export const DEFAULT_SCHEMA_REF = `./node_modules/${PACKAGE_NAME}/schema/mockapi.schema.json`;

/**
 * The starter config `mockapi init` writes: a small, realistic API that validates as it is, with
 * comments that explain each part and the modeline that gives editors completion and checks.
 */
export function starterConfig(options: { project: string; apiKey: string; schemaRef?: string }): string {
  const project = yamlString(options.project);
  return `# yaml-language-server: $schema=${options.schemaRef ?? DEFAULT_SCHEMA_REF}
# mockapi config: a local mock of the API this project calls. Commit it with the app.
# Start it with \`npx mockapi-cli serve\`; check it with \`npx mockapi-cli validate\`.
project: ${project}

# Clients send it as \`X-API-Key: <key>\`, \`Authorization: Bearer <key>\` or Basic auth.
# Replace it with \`npx mockapi-cli rotate-key\`.
apiKey: ${options.apiKey}

server:
  port: 4010          # --port overrides it; 0 picks a free port

limits:
  rateLimit:
    requests: 100     # at most 100 requests ...
    window: 1m        # ... in any rolling minute, then 429
  monthlyQuota: 10000 # requests per calendar month (UTC)

# Endpoints answer under /mock: GET http://127.0.0.1:4010/mock/users/42
endpoints:
  - method: GET
    path: /users
    response:
      body:
        - id: 1
          name: Ada Lovelace
        - id: 2
          name: Grace Hopper

  - method: GET
    path: /users/:id
    delay: 120ms      # wait before answering
    response:
      headers:
        x-request-id: demo
      body:
        id: 1
        name: Ada Lovelace

  - method: POST
    path: /users
    failRate: 0.1     # 10% of calls get the simulated 500
    response:
      status: 201
      body:
        id: 3
        name: Katherine Johnson
`;
}

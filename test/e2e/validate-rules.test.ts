// The rules of request validation that validate.test.ts leaves implicit, each with a test of its own:
// where the check stands in the request path (after auth, limits and match; before delay and fail
// rate), cookie parameters and exploded query arrays, the operation's own 422 example, the modes
// and their per-endpoint overrides, `?violations=false`, readOnly/writeOnly in requests and in the
// static answers `mockapi validate` checks, and a description file that is not there.
import { describe, expect, test } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_validateRules000000000000000001';
const temp = useTempDir('mockapi-validate-rules-');

const DESCRIPTION = `openapi: 3.0.3
info: { title: rules, version: '1' }
paths:
  /things:
    get:
      parameters:
        - { name: tag, in: query, explode: true, schema: { type: array, items: { type: string, enum: [a, b] } } }
        - { name: session, in: cookie, required: true, schema: { type: string, pattern: '^s_' } }
      responses:
        '200': { description: ok }
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Account' }
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Account' }
        '422':
          description: invalid
          content:
            application/json:
              example: { error: invalid_account }
  /other:
    get:
      parameters:
        - { name: limit, in: query, schema: { type: integer } }
      responses:
        '200': { description: ok }
components:
  schemas:
    Account:
      type: object
      required: [id, login, password]
      properties:
        id: { type: integer, readOnly: true }
        login: { type: string, minLength: 2 }
        password: { type: string, writeOnly: true }
        visits: { type: integer, format: int32 }
`;

async function setup(name: string, config: string): Promise<string> {
  const dir = join(temp.path, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'openapi.yaml'), DESCRIPTION);
  await writeFile(join(dir, 'mockapi.yaml'), `apiKey: ${KEY}\n${config}`);
  return join(dir, 'mockapi.yaml');
}

const auth = { 'x-api-key': KEY };
const postJson = (server: ServeProcess, path: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(`${server.mock}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });

interface Entry {
  status: number;
  step: string;
  violations?: Array<{ in: string; pointer: string; param: string | null; keyword: string; message: string }>;
}

async function journal(server: ServeProcess, query = 'limit=1'): Promise<Entry[]> {
  const res = await fetch(`${server.url}/__mockapi/requests?${query}`, { headers: auth });
  return ((await res.json()) as { requests: Entry[] }).requests;
}

test('the check comes after auth, the rate limit and the match, and before the delay and the fail rate', async () => {
  const config = await setup(
    'order',
    `limits:
  rateLimit: { requests: 6, window: 1m }
openapi:
  spec: ./openapi.yaml
endpoints:
  - method: GET
    path: /things
    failRate: 1
    response: { body: [] }
  - method: POST
    path: /things
    failRate: 1
    delay: 60s
    validate: enforce
    response: { status: 201, body: { id: 1, login: ada } }
`,
  );
  const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
  try {
    // Auth first: a request without a key never reaches validation.
    const anonymous = await postJson(server, '/things', { login: 'a' }, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-mockapi-violations')).toBeNull();
    // Match first: no endpoint, no operation to check against.
    expect((await postJson(server, '/nothing', { login: 'a' })).status).toBe(404);
    // enforce answers before the delay (60 s; the fetch gives up after 15) and the fail rate (1).
    const enforced = await postJson(server, '/things', { login: 'a', password: 'x' });
    expect(enforced.status).toBe(422);
    expect(await enforced.json()).toEqual({ error: 'invalid_account' }); // the operation's own 422 example: it has no 400
    expect((await journal(server))[0]).toMatchObject({ status: 422, step: 'validation' });
    // report: the fail rate still applies after the check, and its answer carries the count.
    const failed = await fetch(`${server.mock}/things?tag=a&tag=c`, { headers: auth });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-mockapi-violations')).toBe('2');
    expect((await journal(server))[0]).toMatchObject({
      status: 500,
      step: 'failure',
      violations: [{ in: 'query' }, { in: 'cookie' }],
    });
    // The rate limit first: once the window is full, a request that breaks the description gets the 429.
    let limited: Response | undefined;
    for (let i = 0; i < 10 && limited === undefined; i++) {
      const res = await postJson(server, '/things', { login: 'a' });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(422);
    }
    expect(limited?.headers.get('x-mockapi-violations')).toBeNull();
    const [last] = await journal(server);
    expect(last).toMatchObject({ status: 429, step: 'rate_limit' });
    expect(last?.violations).toBeUndefined();
  } finally {
    await server.stop();
  }
}, 60_000);

describe('parameters, bodies and modes', () => {
  test('cookie parameters and exploded query arrays (tag=a&tag=b); ?violations=false lists the requests that followed the description', async () => {
    const config = await setup(
      'params',
      'openapi:\n  spec: ./openapi.yaml\nendpoints:\n  - method: GET\n    path: /things\n    response: { body: [] }\n',
    );
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    try {
      const bad = await fetch(`${server.mock}/things?tag=a&tag=c`, {
        headers: { ...auth, cookie: 'theme=dark; session=x_1' },
      });
      expect(bad.headers.get('x-mockapi-violations')).toBe('2');
      expect((await journal(server))[0]?.violations).toEqual([
        // Sorted by place (path, query, header, cookie, body), then pointer.
        {
          in: 'query',
          pointer: '/tag/1',
          param: 'tag[1]',
          keyword: 'enum',
          message: 'query parameter tag[1] must be one of "a", "b"',
        },
        {
          in: 'cookie',
          pointer: '/session',
          param: 'session',
          keyword: 'pattern',
          message: 'cookie session must match pattern "^s_"',
        },
      ]);
      const missing = await fetch(`${server.mock}/things`, { headers: auth });
      expect(missing.headers.get('x-mockapi-violations')).toBe('1');
      expect((await journal(server))[0]?.violations).toEqual([
        {
          in: 'cookie',
          pointer: '/session',
          param: 'session',
          keyword: 'required',
          message: 'cookie session is required',
        },
      ]);
      const good = await fetch(`${server.mock}/things?tag=a&tag=b`, { headers: { ...auth, cookie: 'session=s_1' } });
      expect(good.headers.get('x-mockapi-violations')).toBeNull();

      const clean = await journal(server, 'violations=false');
      expect(clean.map((e) => e.violations)).toEqual([[]]);
      expect((await journal(server, 'violations=true')).map((e) => e.violations?.length)).toEqual([2, 1]); // oldest first
    } finally {
      await server.stop();
    }
  });

  test("requests: off turns validation off, and an endpoint's validate: overrides the config's mode either way", async () => {
    const offConfig = await setup(
      'off',
      `openapi:
  spec: ./openapi.yaml
  validate: { requests: off }
endpoints:
  - method: GET
    path: /other
    response: { body: [] }
  - method: POST
    path: /things
    validate: enforce
    response: { status: 201, body: { id: 1, login: ada } }
`,
    );
    const enforceConfig = await setup(
      'enforce-overrides',
      `openapi:
  spec: ./openapi.yaml
  validate: { requests: enforce }
endpoints:
  - method: GET
    path: /other
    validate: report
    response: { body: [] }
  - method: GET
    path: /things
    validate: off
    response: { body: [] }
  - method: POST
    path: /things
    response: { status: 201, body: { id: 1, login: ada } }
`,
    );
    const off = await startServe(['-c', offConfig, '--no-state', '--log', 'off']);
    const enforce = await startServe(['-c', enforceConfig, '--no-state', '--log', 'off']);
    try {
      const notChecked = await fetch(`${off.mock}/other?limit=many`, { headers: auth });
      expect(notChecked.status).toBe(200);
      expect(notChecked.headers.get('x-mockapi-violations')).toBeNull();
      expect((await journal(off))[0]?.violations).toBeUndefined();
      expect((await postJson(off, '/things', { login: 'a' })).status).toBe(422);

      const reported = await fetch(`${enforce.mock}/other?limit=many`, { headers: auth });
      expect(reported.status).toBe(200);
      expect(reported.headers.get('x-mockapi-violations')).toBe('1');
      const skipped = await fetch(`${enforce.mock}/things?tag=zzz`, { headers: auth });
      expect(skipped.status).toBe(200);
      expect((await journal(enforce))[0]?.violations).toBeUndefined();
      expect((await postJson(enforce, '/things', { login: 'a' })).status).toBe(422);
    } finally {
      await off.stop();
      await enforce.stop();
    }
  });

  test('a readOnly property is not required in a request', async () => {
    const config = await setup(
      'read-only',
      'openapi:\n  spec: ./openapi.yaml\n  validate: { requests: enforce }\nendpoints:\n  - method: POST\n    path: /things\n    response: { status: 201, body: { id: 1, login: ada } }\n',
    );
    const server = await startServe(['-c', config, '--no-state', '--log', 'off']);
    try {
      // `id` is required by the schema but readOnly: a client never sends it. `password` (writeOnly) is required.
      expect((await postJson(server, '/things', { login: 'ada', password: 'pw' })).status).toBe(201);
      expect((await journal(server))[0]?.violations).toEqual([]);
      const withoutPassword = await postJson(server, '/things', { login: 'ada' });
      expect(withoutPassword.status).toBe(422);
    } finally {
      await server.stop();
    }
  });
});

describe('mockapi validate', () => {
  const endpoint = (body: string) =>
    `openapi:\n  spec: ./openapi.yaml\nendpoints:\n  - method: POST\n    path: /things\n    response: { status: 201, body: ${body} }\n`;

  test('a writeOnly property is not required in a static answer; a readOnly one is, and types are checked', async () => {
    const config = await setup('write-only', endpoint('{ id: 1, login: ada }'));
    expect(await runCli(['validate', '-c', config])).toMatchObject({
      code: 0,
      stdout: `${config} is valid (1 endpoint)\n`,
    });
    await writeFile(config, `apiKey: ${KEY}\n${endpoint('{ login: ada }')}`);
    expect(await runCli(['validate', '-c', config])).toMatchObject({
      code: 1,
      stderr: `${config}:7:36: endpoints[0].response.body does not match the 201 response of POST /things: id is required\n`,
    });
    await writeFile(config, `apiKey: ${KEY}\n${endpoint('{ id: 1, login: ada, password: 5 }')}`);
    expect(await runCli(['validate', '-c', config])).toMatchObject({
      code: 1,
      stderr: `${config}:7:36: endpoints[0].response.body does not match the 201 response of POST /things: password must be string\n`,
    });
  });

  test("OpenAPI's int32 is a range of whole numbers, checked in a static answer", async () => {
    const config = await setup('int32', endpoint('{ id: 1, login: ada, visits: 2147483647 }'));
    expect(await runCli(['validate', '-c', config])).toMatchObject({ code: 0 });
    await writeFile(config, `apiKey: ${KEY}\n${endpoint('{ id: 1, login: ada, visits: 99999999999 }')}`);
    expect(await runCli(['validate', '-c', config])).toMatchObject({
      code: 1,
      stderr: `${config}:7:36: endpoints[0].response.body does not match the 201 response of POST /things: visits must match format "int32"\n`,
    });
  });

  test('a description that is not there is an error at openapi.spec, with its position', async () => {
    const config = await setup('missing-file', 'openapi:\n  spec: ./nope.yaml\n');
    expect(await runCli(['validate', '-c', config])).toMatchObject({
      code: 1,
      stderr: `${config}:3:9: openapi.spec cannot read ${join(temp.path, 'missing-file', 'nope.yaml')}: no such file\n`,
    });
  });
});

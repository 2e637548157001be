// What each shell block of the pages needs around it to run as written (test/e2e/docs-commands.test.ts):
// the config the page shows beside it, a running server, a webhook receiver, an upstream. A block
// is named `<page>: <its first command>` (the first one the shared checkout did not already run).
// A block no session names runs in a fresh project folder after `mockapi init`.

export interface Session {
  /** The blocks it runs in order, in one shell (a later block continues "in another terminal"). */
  blocks: string[];
  /** `checkout`: in the copy of this repository (pages that run its examples). Default: a folder of the project. */
  place?: 'checkout';
  /** In the project's own folder (where the README installs the package), not a sub-folder. */
  inApp?: boolean;
  /** `mockapi init` first (the installed bin). */
  init?: boolean;
  /** The page's YAML block holding `containing`, written as ./mockapi.yaml (with `replace`s). */
  config?: { page: string; containing: string; replace?: [string, string][] };
  /** Files written into the folder first. */
  files?: Record<string, string>;
  /** Servers of the harness started first (`node <file>`), until their ports answer. */
  helpers?: { file: string; ports: number[] }[];
  /** `mockapi serve <args>` (the installed bin) started first, for blocks that need a running server. */
  serve?: { args?: string; ports?: number[] };
  /** More ports a server command of the page listens on (HTTPS). */
  ports?: Record<string, number[]>;
  /** Harness lines run before / after a command (after its ports answer, for a server). `$OUT` is the output folder. */
  before?: Record<string, string>;
  after?: Record<string, string>;
  /** The exit status a command ends with where the page says it is not 0 (`verify` exits 1 on drift). */
  exit?: Record<string, number>;
  /**
   * What a command printed: `has` in its stdout (or stderr). `quoted`: the page shows that output
   * in a comment of this command (`said` of that comment, when it is another command's output).
   */
  expect?: {
    command: string;
    has: string | RegExp;
    stream?: 'out' | 'err';
    quoted?: { by?: string; comment: string };
  }[];
}

/** Commands that cannot run here, and why. Nothing else may be left out. */
export const NOT_RUN: { page: string; command: string; why: string }[] = [
  {
    page: 'docs/install.md',
    command: 'npm install --save-dev mockapi-cli',
    why: 'mockapi-cli is not on the public registry yet (the tarball install above is what runs)',
  },
  {
    page: 'README.md',
    command: 'npm test',
    why: 'it is this test suite: CI runs exactly it, and running it here would run this file again',
  },
  {
    page: 'docs/internals/build-and-release.md',
    command: 'npm version patch',
    why: 'makes a release: bumps the version, commits and tags',
  },
  {
    page: 'docs/internals/build-and-release.md',
    command: 'npm publish "$(npm run -s pack)"',
    why: 'publishes to the public registry',
  },
];

/** Placeholders of the pages, and what stands in for them here. `tarball`: the path `npm run pack` printed. */
export const SUBSTITUTE: { text: string; with: string; why: string }[] = [
  { text: '/path/to/mockapi-cli-0.1.0.tgz', with: 'tarball', why: 'where npm run pack put the tarball' },
  { text: 'MOCKAPI_UPSTREAM_KEY=…', with: 'MOCKAPI_UPSTREAM_KEY=upstream-test-key-7f3a', why: "the real API's key" },
  {
    text: 'sk_test_…',
    with: 'sk_test_upstreamSandboxKey7f3a',
    why: "the real API's test key (an HTTP header cannot carry the ellipsis)",
  },
];

const KEY = 'mk_9WbDq2vG0yq7Jc4TnR1sXe8ZkP3fLmA6';
/** Two JWTs (header.payload.signature) the recording must redact. */
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';

/** The upstream of the record page: users 41–43 (two with a JWT in a link), a job that is running twice, then done. */
const UPSTREAM = `import { createServer } from 'node:http';
let polls = 0;
const names = { 41: 'Ada', 42: 'Grace', 43: 'Linus' };
createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer upstream-test-key-7f3a') return res.writeHead(401).end();
  const user = /^\\/v1\\/users\\/(4[123])$/.exec(req.url);
  res.setHeader('content-type', 'application/json');
  if (user) return res.end(JSON.stringify({ id: Number(user[1]), name: names[user[1]], ...(user[1] === '42' ? {} : { link: '${JWT}' }) }));
  if (req.url === '/v1/jobs/7') return res.writeHead(++polls <= 2 ? 202 : 200).end(JSON.stringify({ state: polls <= 2 ? 'running' : 'done' }));
  res.writeHead(404).end('{"error":"not_found"}');
}).listen(4020, '127.0.0.1');
`;

/** The verify page's real API: the customer of its example, drifted as the page's report shows. */
const VERIFY_UPSTREAM = `import { createServer } from 'node:http';
createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer sk_test_upstreamSandboxKey7f3a') return res.writeHead(401).end();
  if (req.url !== '/customers/cus_test_42') return res.writeHead(404).end();
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ id: 'cus_test_42', full_name: 'Ada Lovelace', status: 'delinquent', balance: '0', email: 'ada@example.com' }));
}).listen(4020, '127.0.0.1');
`;
const verifyConfig = {
  page: 'docs/verify.md',
  containing: 'cus_test_42',
  replace: [['https://api.example.com', 'http://127.0.0.1:4020']] as [string, string][],
};
/** The report of docs/verify.md, line by line (the last names the upstream the config names). */
const VERIFY_REPORT = [
  'drift    GET /customers/:id  /customers/cus_test_42',
  '         $.status   new value "delinquent" (the mock sends "active")',
  '         $.balance  type number → string',
  '         $.name     renamed to $.full_name (string)',
  '         $.email    new in the upstream (string)',
  '',
  '0 same, 1 drift, 0 failed: 1 example of 1 endpoint against http://127.0.0.1:4020',
];

const RESOURCES_KEY = 'sk_test_mockapiResources0000000000001';
const resourcesConfig = { page: 'docs/resources.md', containing: `apiKey: ${RESOURCES_KEY}` };
/** docs/resources.md's walk-through, block by block (its first: the server it leaves running). */
const RESOURCES_BLOCKS = [
  'npx mockapi-cli serve --clock 2026-01-01T00:00:00Z',
  `curl -s http://127.0.0.1:4010/v1/customers -u ${RESOURCES_KEY}: -d email=jenny@example.com -d "metadata[order]=6735"`,
  `curl -s http://127.0.0.1:4010/v1/customers/cus_demo -u ${RESOURCES_KEY}: -d "metadata[plan]=pro"`,
  `curl -s "http://127.0.0.1:4010/v1/customers?limit=1" -u ${RESOURCES_KEY}:`,
  `curl -s http://127.0.0.1:4010/v1/payment_intents -u ${RESOURCES_KEY}: -H "Idempotency-Key: order-6735" -d amount=2000`,
  `curl -si http://127.0.0.1:4010/v1/payment_intents -u ${RESOURCES_KEY}: -H "Idempotency-Key: order-6735" -d amount=2000 | grep -i replayed`,
  `curl -s -X POST http://127.0.0.1:4010/v1/payment_intents/pi_ko4gYu56qBxsmdg1pKcCVuaV/confirm -u ${RESOURCES_KEY}:`,
  `curl -s -X POST http://127.0.0.1:4010/__mockapi/clock -H 'content-type: application/json' -d '{"advance":"2s"}'`,
  `curl -s http://127.0.0.1:4010/v1/payment_intents/pi_ko4gYu56qBxsmdg1pKcCVuaV -u ${RESOURCES_KEY}:`,
  `curl -s -X POST http://127.0.0.1:4010/v1/payment_intents/pi_ko4gYu56qBxsmdg1pKcCVuaV/cancel -u ${RESOURCES_KEY}:`,
  `curl -s -X DELETE http://127.0.0.1:4010/v1/customers/cus_demo -u ${RESOURCES_KEY}:`,
  `curl -s http://127.0.0.1:4010/v1/customers/cus_demo -u ${RESOURCES_KEY}:`,
  'npx mockapi-cli resources list customers',
  `curl -s -X POST http://127.0.0.1:4010/__mockapi/reset -H 'content-type: application/json' -d '{"resources":true,"journal":false}' > /dev/null`,
];
const AI_KEY_CURL = (body: string) =>
  `curl -s${body.includes('max_tokens') ? ' -D -' : ''} http://127.0.0.1:4010/v1/chat/completions -H "Authorization: Bearer $KEY"  -H 'Content-Type: application/json' -d '${body}'`;

/** The webhook page's receiver: 200 to every delivery. */
const RECEIVER = `import { createServer } from 'node:http';
createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end())).listen(3000);
`;

const httpsConfig = { page: 'docs/https.md', containing: 'port: 4443' };

/** The fleet page's stub, added on host B. */
const FLEET_STUB = `curl -s -X POST -H 'content-type: application/json' http://127.0.0.1:4011/__mockapi/stubs -d '{"endpoint":{"method":"GET","path":"/ping","response":{"body":{"pong":true}}}}'`;

export const SESSIONS: Session[] = [
  {
    // failRate 0.1: with this seed the first request is not the simulated failure.
    blocks: [`README.md: curl -H 'X-API-Key: ${KEY}' http://127.0.0.1:4010/mock/users/42`],
    config: { page: 'README.md', containing: 'failRate: 0.1          # one request in ten' },
    serve: { args: '--seed 1' },
  },
  {
    blocks: [
      'README.md: npm install --save-dev /path/to/mockapi-cli-0.1.0.tgz',
      "README.md: KEY=$(grep '^apiKey:' mockapi.yaml | cut -d' ' -f2)",
    ],
    inApp: true,
    expect: [
      {
        command: 'npx mockapi-cli init',
        has: 'Created ./mockapi.yaml with a new API key. Start the mock with: npx mockapi-cli serve\n',
      },
      {
        command: 'curl -H "X-API-Key: $KEY" http://127.0.0.1:4010/mock/users',
        has: '[{"id":1,"name":"Ada Lovelace"},{"id":2,"name":"Grace Hopper"}]',
      },
      { command: 'curl -i http://127.0.0.1:4010/mock/users', has: /^HTTP\/1\.1 401 Unauthorized\r\n/ },
    ],
  },
  { blocks: ['README.md: npm start'], place: 'checkout' },
  {
    blocks: ['README.md: npx mockapi-cli usage'],
    init: true,
    serve: {},
    expect: [{ command: 'npx mockapi-cli usage --reset', has: /^Usage for \d{4}-\d\d reset to 0/ }],
  },
  {
    blocks: ['README.md: KEY=$(npx mockapi-cli rotate-key)'],
    init: true,
    serve: {},
    expect: [{ command: 'KEY=$(npx mockapi-cli rotate-key)', has: '1 running server confirmed', stream: 'err' }],
  },
  {
    blocks: ['docs/admin-api.md: npx mockapi-cli serve &'],
    init: true,
    expect: [{ command: 'curl -s http://127.0.0.1:4010/__mockapi/usage', has: '"requests":0' }],
  },
  {
    blocks: ['docs/cli.md: npx mockapi-cli serve --help'],
    init: true,
    expect: [{ command: 'npx mockapi-cli validate', has: './mockapi.yaml is valid (3 endpoints)\n' }],
  },
  { blocks: ['docs/dynamic-answers.md: npx mockapi-cli serve -c examples/dynamic/mockapi.yaml'], place: 'checkout' },
  {
    blocks: ['docs/hot-reload.md: npx mockapi-cli serve &'],
    init: true,
    // The page's comment: the server says so on stderr.
    after: {
      "sed -i 's/failRate: 0.1 /failRate: 0.5 /' mockapi.yaml": `__wait_for "$OUT/c0.err" 'reloaded mockapi.yaml: ~1 endpoint changed (POST /users)'`,
    },
    expect: [
      {
        command: 'npx mockapi-cli serve &',
        stream: 'err',
        has: 'reloaded mockapi.yaml: ~1 endpoint changed (POST /users)\n',
        quoted: {
          by: "sed -i 's/failRate: 0.1 /failRate: 0.5 /' mockapi.yaml",
          comment: 'stderr: reloaded mockapi.yaml: ~1 endpoint changed (POST /users)',
        },
      },
    ],
  },
  {
    blocks: ['docs/https.md: npx mockapi-cli serve'],
    config: httpsConfig,
    ports: { 'npx mockapi-cli serve': [4443] },
    expect: [
      {
        command: `node -e "fetch('https://localhost:4443/mock/users', { headers: { 'x-api-key': '${KEY}' } }).then((r) => r.text()).then(console.log)"`,
        has: '[{"id":1,"name":"Ada"}]\n',
      },
    ],
  },
  {
    // `npm test`: the project's own tests, here one fetch over HTTPS that fails unless the CA is trusted.
    blocks: ['docs/https.md: export $(npx mockapi-cli tls env)'],
    config: httpsConfig,
    serve: { ports: [4010, 4443] },
    files: {
      'package.json': JSON.stringify({
        name: 'https-app',
        private: true,
        scripts: {
          test: `node -e "fetch('https://localhost:4443/mock/users',{headers:{'x-api-key':'${KEY}'}}).then(async(r)=>{console.log(r.status,await r.text());process.exit(r.status===200?0:1)})"`,
        },
      }),
    },
    expect: [{ command: 'npm test', has: '200 [{"id":1,"name":"Ada"}]' }],
  },
  {
    blocks: [
      `docs/https.md: curl --cacert "$(npx mockapi-cli tls path)" -H 'x-api-key: ${KEY}' https://localhost:4443/mock/users`,
    ],
    config: httpsConfig,
    serve: { ports: [4010, 4443] },
    expect: [
      {
        command: `curl --cacert "$(npx mockapi-cli tls path)" -H 'x-api-key: ${KEY}' https://localhost:4443/mock/users`,
        has: '[{"id":1,"name":"Ada"}]',
      },
    ],
  },
  { blocks: ['docs/inspector.md: npx mockapi-cli serve'], init: true },
  { blocks: ['docs/install.md: npm install --save-dev mockapi-cli'] },
  {
    blocks: ['docs/install.md: npm start'],
    place: 'checkout',
    expect: [
      {
        command: "curl -H 'X-API-Key: mk_demo7Qx2Lr9Vt4Nw8Ks3Hf6Jc1Pz5Bm0' http://127.0.0.1:4010/mock/products",
        has: 'Espresso cup',
      },
    ],
  },
  {
    blocks: ['docs/keys.md: npx mockapi-cli serve &'],
    config: { page: 'docs/keys.md', containing: 'sk_test_ci_4eC39HqLyjWDarjtT1zdp7dc' },
    expect: [
      { command: 'npx mockapi-cli usage', has: 'key ci (plan pro): 1 request;' },
      // A rotated key keeps its prefix: a Stripe-style test key stays one.
      { command: 'npx mockapi-cli rotate-key --name ci', has: /^sk_test_ci_[0-9A-Za-z]{32}\n$/ },
    ],
  },
  {
    blocks: ['docs/limits.md: npx mockapi-cli serve -c examples/limits/mockapi.yaml &'],
    place: 'checkout',
    expect: [
      {
        command:
          "for i in $(seq 1 7); do curl -s -o /dev/null -w '%{http_code}\\n'  -H 'X-API-Key: mk_limitsExample0000000000000000003' http://127.0.0.1:4010/mock/search; done",
        has: '200\n200\n200\n200\n200\n429\n429\n',
      },
    ],
  },
  {
    blocks: ['docs/openapi.md: cd examples/openapi'],
    place: 'checkout',
    expect: [
      {
        command:
          "curl -H 'X-API-Key: mk_openapiExample000000000000000009' -H 'Prefer: example=cat'  http://127.0.0.1:4010/mock/v1/pets/2",
        has: '"tag":"cat"',
      },
    ],
  },
  {
    blocks: ['docs/record-and-proxy.md: export MOCKAPI_UPSTREAM_KEY=…'],
    config: {
      page: 'docs/record-and-proxy.md',
      containing: 'recording:',
      replace: [['https://api.example.com/v1', 'http://127.0.0.1:4020/v1']],
    },
    files: { 'upstream.mjs': UPSTREAM },
    helpers: [{ file: 'upstream.mjs', ports: [4020] }],
    // "Run your app or tests against the mock with the mock's key": seven requests.
    after: {
      'npx mockapi-cli record': `for p in users/41 users/42 users/43 jobs/7 jobs/7 jobs/7 jobs/7; do curl -sf -o /dev/null -H 'X-API-Key: ${KEY}' "http://127.0.0.1:4010/mock/$p" || exit 1; done`,
      'npx mockapi-cli serve': `curl -sf -H 'X-API-Key: ${KEY}' http://127.0.0.1:4010/mock/users/42 >"$OUT/replay.out"; grep -qF '"name":"Grace"' "$OUT/replay.out"`,
    },
    expect: [
      {
        command: 'npx mockapi-cli record',
        stream: 'err',
        has: 'recording from http://127.0.0.1:4020/v1: requests no endpoint answers go there and are recorded',
      },
      ...[
        '7 requests recorded into 2 endpoints of ./mockapi.yaml',
        '  added GET /users/:id (3 requests; folded /users/41, /users/42, /users/43 (template from segment shapes); variations: responses by params.id)',
        '  added GET /jobs/:id (4 requests; answers changed over time: a sequence)',
        '  redacted 2 × a JWT',
      ].map((line) => ({
        command: 'npx mockapi-cli record',
        stream: 'err' as const,
        has: `\n${line}\n`,
        quoted: { comment: `  ${line}` },
      })),
    ],
  },
  {
    blocks: ['docs/requests.md: npx mockapi-cli init && npx mockapi-cli serve &'],
    expect: [
      { command: 'curl -i http://127.0.0.1:4010/mock/users', has: /^HTTP\/1\.1 401 / },
      {
        command: `curl -i -H "Authorization: Bearer $(grep '^apiKey:' mockapi.yaml | cut -d' ' -f2)"  http://127.0.0.1:4010/mock/users`,
        has: /^HTTP\/1\.1 200 /,
      },
    ],
  },
  { blocks: ['docs/resilience.md: npx mockapi-cli serve -c examples/flaky/mockapi.yaml --seed 42'], place: 'checkout' },
  {
    blocks: ['docs/security.md: npx mockapi-cli serve'],
    init: true,
    expect: [{ command: 'npx mockapi-cli serve --host 0.0.0.0', stream: 'err', has: 'admin API token: ' }],
  },
  {
    // A fleet: three hosts and one Redis. Each host answers its health call only once it is
    // registered in Redis (requests wait at its gate until then), so fleet status finds all three.
    blocks: [
      'docs/several-instances.md: npm install --save-dev @redis/client',
      `docs/several-instances.md: ${FLEET_STUB}`,
    ],
    config: { page: 'docs/several-instances.md', containing: 'fleet: { store:' },
    after: Object.fromEntries(
      [4010, 4011, 4012].map((port) => [
        `npx mockapi-cli serve --port ${port} &`,
        `curl -s http://127.0.0.1:${port}/__mockapi/health > /dev/null`,
      ]),
    ),
    expect: [
      {
        command: 'npx mockapi-cli fleet status',
        has: /^fleet of shop-api through redis:\/\/127\.0\.0\.1:6379\/0: 3 hosts\nADDRESS /m,
      },
      { command: FLEET_STUB, has: '"endpoint":{"method":"GET","path":"/ping"' },
      {
        command: `curl -s -H 'X-API-Key: ${KEY}' http://127.0.0.1:4012/mock/ping`,
        has: '{"pong":true}',
        quoted: { comment: '{"pong":true}: added on B, answered by C' },
      },
      { command: "curl -s 'http://127.0.0.1:4010/__mockapi/requests?path=/mock/ping'", has: '"path":"/mock/ping"' },
    ],
  },
  {
    blocks: ["docs/several-instances.md: redis-server --save '' --appendonly no &"],
    config: { page: 'docs/several-instances.md', containing: 'store: redis://127.0.0.1:6379/0' },
    expect: [{ command: 'npx mockapi-cli usage', has: 'every server of shop-api through redis://127.0.0.1:6379/0' }],
  },
  {
    blocks: ['docs/streaming.md: npx mockapi-cli serve'],
    config: { page: 'docs/streaming.md', containing: 'preset: openai-chat' },
    expect: [
      {
        command: `curl -N http://127.0.0.1:4010/mock/v1/chat/completions  -H "authorization: Bearer mk_replace_me_with_a_long_random_key"  -H "content-type: application/json" -d '{"model":"gpt-4o-mini","stream":true}'`,
        has: 'data: {',
      },
    ],
  },
  {
    blocks: [
      `docs/stubs.md: curl -s -X POST -H 'content-type: application/json' http://127.0.0.1:4010/__mockapi/stubs  -d '{"name":"user-gone","times":2,"endpoint":{"method":"GET","path":"/users/:id","response":{"status":404,"body":{"error":"gone"}}}}'`,
    ],
    init: true,
    serve: {},
    expect: [
      {
        command: `curl -s -X POST -H 'content-type: application/json' http://127.0.0.1:4010/__mockapi/stubs  -d '{"name":"user-gone","times":2,"endpoint":{"method":"GET","path":"/users/:id","response":{"status":404,"body":{"error":"gone"}}}}'`,
        has: /^\{"id":"[0-9a-f]{12}","name":"user-gone","endpoint":\{"method":"GET","path":"\/users\/:id","response":\{"status":404,"body":\{"error":"gone"\}\}\},"times":2,"remaining":2\}$/,
        quoted: {
          comment:
            '{"id":"3f9c0a7b21de","name":"user-gone","endpoint":{"method":"GET","path":"/users/:id","response":{"status":404,"body":{"error":"gone"}}},"times":2,"remaining":2}',
        },
      },
    ],
  },
  {
    blocks: ['docs/validation.md: cd examples/validation'],
    place: 'checkout',
    expect: [
      {
        command: `curl -s -D - -H 'X-API-Key: mk_test_key_0123456789abcdef0123' -H 'content-type: application/json'  -d '{"amount":"5","currency":"usd"}' http://127.0.0.1:4010/mock/v1/charges`,
        has: 'x-mockapi-violations: 1\r\n',
      },
      {
        command: 'npx mockapi-cli requests --violations',
        has: '\n  body /amount type: body field amount must be integer\n',
        quoted: { comment: '  body /amount type: body field amount must be integer' },
      },
    ],
  },
  {
    // The walk-through in one shell, as the page runs it: each block's answer is the one it shows.
    blocks: RESOURCES_BLOCKS.map((first) => `docs/resources.md: ${first}`),
    config: resourcesConfig,
    expect: [
      {
        command: RESOURCES_BLOCKS[1]!,
        has: '{"id":"cus_QmjjuRqwDcOphM","object":"customer","email":"jenny@example.com","metadata":{"order":"6735"}}',
      },
      {
        command: RESOURCES_BLOCKS[4]!,
        has: '{"id":"pi_ko4gYu56qBxsmdg1pKcCVuaV","object":"payment_intent","status":"requires_confirmation","amount":2000,"currency":"usd"}',
      },
      { command: RESOURCES_BLOCKS[5]!, has: /^idempotent-replayed: true\r?$/im },
      { command: RESOURCES_BLOCKS[8]!, has: '"status":"succeeded"' },
      { command: RESOURCES_BLOCKS[9]!, has: '"code":"payment_intent_unexpected_state"' },
      { command: RESOURCES_BLOCKS[11]!, has: `"message":"No such customer: 'cus_demo'"` },
      {
        command: 'npx mockapi-cli resources list customers',
        has: '{"id":"cus_QmjjuRqwDcOphM","object":"customer","email":"jenny@example.com","metadata":{"order":"6735"}}\n',
      },
      {
        command: `curl -s "http://127.0.0.1:4010/v1/customers?limit=3" -u ${RESOURCES_KEY}:`,
        has: '{"object":"list","data":[{"id":"cus_demo","object":"customer","email":"ada@example.com","metadata":{}}],"has_more":false,"url":"/v1/customers"}',
      },
    ],
  },
  {
    // The reference's filter, on the walk-through's server after its update of cus_demo.
    blocks: ['docs/cli.md: npx mockapi-cli resources list customers --where metadata[plan]=pro'],
    config: resourcesConfig,
    serve: {},
    before: {
      'npx mockapi-cli resources list customers --where metadata[plan]=pro': `curl -sf -o /dev/null http://127.0.0.1:4010/v1/customers/cus_demo -u ${RESOURCES_KEY}: -d "metadata[plan]=pro"`,
    },
    expect: [
      {
        command: 'npx mockapi-cli resources list customers --where metadata[plan]=pro',
        has: /^\{"id":"cus_demo",.*"metadata":\{"plan":"pro"\}\}\n$/,
      },
    ],
  },
  {
    // Its real API drifted as the page's report shows: verify exits 1, and --update leaves a hand-written endpoint alone (exit 1).
    blocks: [
      'docs/verify.md: MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify',
      'docs/verify.md: MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify --update',
    ],
    config: verifyConfig,
    files: { 'upstream.mjs': VERIFY_UPSTREAM },
    helpers: [{ file: 'upstream.mjs', ports: [4020] }],
    exit: {
      'MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify': 1,
      'MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify --update': 1,
    },
    expect: [
      { command: 'MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify', has: `${VERIFY_REPORT.join('\n')}\n` },
      {
        command: 'MOCKAPI_UPSTREAM_KEY=sk_test_… npx mockapi-cli verify --update',
        stream: 'err',
        has: 'not updated: GET /customers/:id: written by hand: --update never changes it\n',
      },
    ],
  },
  {
    blocks: ['docs/cli.md: export MOCKAPI_UPSTREAM_KEY=sk_test_…'],
    config: verifyConfig,
    files: { 'upstream.mjs': VERIFY_UPSTREAM },
    helpers: [{ file: 'upstream.mjs', ports: [4020] }],
    exit: { 'npx mockapi-cli verify': 1, "npx mockapi-cli verify --json --only 'GET /customers/*'": 1 },
    expect: [
      { command: 'npx mockapi-cli verify', has: `${VERIFY_REPORT.join('\n')}\n` },
      {
        command: "npx mockapi-cli verify --json --only 'GET /customers/*'",
        has: /^ {2}"summary": \{\n {4}"same": 0,\n {4}"drift": 1,\n {4}"failed": 0,$/m,
      },
    ],
  },
  {
    blocks: ['docs/limits.md: npx mockapi-cli serve -c examples/look-alike/ai/mockapi.yaml &'],
    place: 'checkout',
    expect: [
      {
        command: AI_KEY_CURL('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"max_tokens":100}'),
        has: /^x-ratelimit-remaining-tokens: 29892\r$/m,
      },
      {
        command: AI_KEY_CURL('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}'),
        has: '"type":"insufficient_quota"',
      },
    ],
  },
  {
    blocks: ['docs/webhooks.md: npx mockapi-cli serve'],
    config: { page: 'docs/webhooks.md', containing: 'charge.succeeded:' },
    files: { 'receiver.mjs': RECEIVER },
    helpers: [{ file: 'receiver.mjs', ports: [3000] }],
    // The event goes 500 ms after the answer (`after: 500ms`): a reader's next command comes later than that.
    before: {
      'npx mockapi-cli webhooks list': `__end=$((SECONDS+30)); until curl -s http://127.0.0.1:4010/__mockapi/webhooks/deliveries | grep -q '"status":"delivered"'; do ((SECONDS>__end)) && exit 1; sleep 0.05; done`,
    },
    expect: [
      {
        command: 'npx mockapi-cli webhooks list',
        has: /^whd_1 charge\.succeeded \(evt_\w+\) → app delivered \(attempts: 200\)$/m,
      },
    ],
  },
];

// `mockapi verify` against a local upstream (node:http on 127.0.0.1, port 0): unchanged → every
// example `same` (exit 0); each kind of drift at its JSON path (exit 1); `--update` then a second
// run → `same`; refused, hanging and untrusted upstreams → `failed` with the reason, never a stack;
// the upstream's key never printed nor written.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, useTempDir, writeConfig, type CliResult } from '../helpers/cli.js';
import { NO_PROXY_ENV, startHttpsUpstream, startUpstream, type Seen, type Upstream } from '../helpers/upstream.js';
import { ensureProjectCa } from '../../src/tls/project-ca.js';
import { issueLeaf } from '../../src/tls/leaf.js';

const KEY = 'mk_verifyTest00000000000000000001';
// Letters only: were the upstream to send it back as a field name or an enum value, the report would show it (redacted).
const UP_KEY = 'upstream-secret-vqhzkd';
const ENV = { ...NO_PROXY_ENV, MOCKAPI_UP_KEY: UP_KEY };
const dir = useTempDir('mockapi-verify-', { each: true });

/** How the upstream answers: as the mock does, drifted everywhere, drifted only where recorded, or leaking its key. */
type Mode = 'same' | 'drift' | 'recorded-drift' | 'leak' | 'hang';
let mode: Mode = 'same';
let calls = 0;
const hung: ServerResponse[] = [];

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    date: new Date().toUTCString(),
  });
  res.end(text);
}

/** The real API: the same shapes as the mock with other values (ids, times), or drifted. */
function answer(req: Seen, res: ServerResponse): void {
  calls++;
  if (req.headers.authorization !== `Bearer ${UP_KEY}`) return send(res, 401, { error: 'bad key' });
  const url = new URL(req.url, 'http://up');
  const drift = mode === 'drift' || mode === 'recorded-drift';
  if (mode === 'hang' && url.pathname.startsWith('/users/')) {
    hung.push(res);
    return;
  }
  const user = /^\/users\/(\w+)$/.exec(url.pathname);
  if (user !== null) {
    const id = Number(user[1]);
    const created = `2026-0${(calls % 9) + 1}-0${(calls % 9) + 1}T10:00:00Z`;
    if (mode === 'leak')
      return send(res, 200, {
        id,
        name: `User ${id}`,
        status: UP_KEY,
        age: 36,
        created,
        tags: [{ label: 'a', weight: 1 }],
        [UP_KEY]: true,
        note: `key ${UP_KEY}`,
      });
    if (!drift)
      return send(res, 200, {
        id,
        name: `User ${id}`,
        status: 'active',
        age: 36,
        created,
        tags: [{ label: 'b', weight: 2 }],
      });
    // renamed (name → full_name), type changed (age), a new required field (email), an enum value (status), array item shape (tags[].color)
    return send(res, 200, {
      id,
      full_name: `User ${id}`,
      status: 'suspended',
      age: '36',
      email: 'u@example.com',
      created,
      tags: [{ label: 'b', weight: 2, color: 'red' }],
    });
  }
  if (url.pathname === '/orders') {
    const data = [
      { id: `ord_${calls}a2b3c4d5e`, status: 'paid', amount: 100 },
      { id: `ord_${calls}z9y8x7w6v`, status: drift ? 'refunded' : 'pending', amount: 5 },
    ];
    return send(res, 200, { data, has_more: false });
  }
  if (url.pathname === '/plans/basic')
    return send(res, mode === 'drift' ? 202 : 200, { id: 'basic', interval: 'month', amount: 900 });
  if (url.pathname === '/report') return send(res, 200, 'a,b\n3,4\n', mode === 'drift' ? 'text/plain' : 'text/csv');
  if (url.pathname === '/charges' && req.method === 'POST')
    return send(res, 201, { id: `ch_${calls}x7y8z9w0`, status: 'succeeded' });
  send(res, 404, { error: 'not found' });
}

let up: Upstream;
beforeEach(async () => {
  mode = 'same';
  up ??= await startUpstream(answer);
  up.seen.length = 0;
});
afterAll(async () => {
  for (const res of hung) res.destroy();
  await up?.close();
});

const configFor = (url: string, extra = '') => `# the team's mock of the billing API
apiKey: ${KEY}
upstream:
  url: ${url}
  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }
${extra}endpoints:
  # recorded from 1 request by mockapi record
  - recorded: GET /users/:id
    method: GET
    path: /users/:id
    response:
      headers: { content-type: application/json }
      body: { id: "\${int(params.id)}", name: User 42, status: active, age: 36, created: "2026-01-01T00:00:00Z", tags: [{ label: a, weight: 1 }] }
    verify:
      request: { params: { id: 42 } }
      expect: 200
      ignore: [created]
  # recorded from 1 request by mockapi record
  - recorded: GET /orders
    method: GET
    path: /orders
    response:
      body: { data: [{ id: ord_1a2b3c4d5e, status: paid, amount: 100 }, { id: ord_9z8y7x6w5v, status: pending, amount: 5 }], has_more: false }
    verify: { request: { query: { limit: 2 } } }
  # my own endpoints
  - method: GET
    path: /plans/:id
    response: { body: { id: basic, interval: month, amount: 900 } }
    verify: { request: { params: { id: basic } }, expect: 200 }
  - method: GET
    path: /report
    response: { headers: { content-type: text/csv }, body: "a,b\\n1,2\\n" }
    verify: { expect: 200 }
  - method: POST
    path: /charges
    response: { status: 201, body: { id: ch_1, status: succeeded } }
    verify: { request: { body: { amount: 100 } }, expect: 201 }
`;

const verify = (args: string[] = [], env: Record<string, string> = ENV): Promise<CliResult> =>
  runCli(['verify', '-c', 'mockapi.yaml', ...args], { cwd: dir.path, env, timeoutMs: 30_000 });
const reportOf = (r: CliResult) =>
  JSON.parse(r.stdout) as {
    summary: Record<string, number>;
    results: Array<{
      endpoint: string;
      result: string;
      reason?: string;
      changes: Array<{ kind: string; path: string; message: string }>;
    }>;
  };
const changesOf = (r: CliResult) =>
  Object.fromEntries(
    reportOf(r).results.map((x) => [
      x.endpoint,
      x.result === 'drift' ? x.changes.map((c) => `${c.kind} ${c.path}: ${c.message}`) : x.result,
    ]),
  );

/** Every file under the project folder, read as text. */
async function writtenFiles(root: string): Promise<string> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    entries.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath, e.name), 'latin1')),
  );
  return texts.join('\n');
}

function expectNoStack(r: CliResult): void {
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).not.toMatch(/\n\s+at /);
}

describe('mockapi verify', () => {
  it('an unchanged upstream: every example is the same, exit 0; the upstream gets upstream.auth, never the mock key', async () => {
    await writeConfig(dir.path, configFor(up.url));
    const r = await verify();
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'same     GET /users/:id  /users/42',
      'same     GET /orders     /orders?limit=2',
      'same     GET /plans/:id  /plans/basic',
      'same     GET /report     /report',
      'skipped  POST /charges   /charges  POST is not sent without --allow-unsafe (it may change data on the real API)',
      '',
      `4 same, 0 drift, 0 failed, 1 skipped: 5 examples of 5 endpoints against ${up.url}`,
      '',
    ]);
    expect(r.code).toBe(0);
    expect(up.seen.map((s) => `${s.method} ${s.url}`).sort()).toEqual([
      'GET /orders?limit=2',
      'GET /plans/basic',
      'GET /report',
      'GET /users/42',
    ]);
    for (const s of up.seen) {
      expect(s.headers.authorization).toBe(`Bearer ${UP_KEY}`);
      expect(JSON.stringify(s.rawHeaders)).not.toContain(KEY);
    }
  });

  it('--allow-unsafe sends the POST example too', async () => {
    await writeConfig(dir.path, configFor(up.url));
    const r = await verify(['--allow-unsafe', '--json']);
    expect(r.code).toBe(0);
    expect(reportOf(r).summary).toMatchObject({ same: 5, drift: 0, failed: 0, skipped: 0 });
    expect(up.seen.find((s) => s.method === 'POST')?.body.toString()).toBe('{"amount":100}');
  });

  it('each kind of drift at its JSON path, exit 1; --update leaves hand-written endpoints alone', async () => {
    await writeConfig(dir.path, configFor(up.url));
    mode = 'drift';
    const r = await verify(['--json']);
    expect(r.code).toBe(1);
    expect(changesOf(r)).toEqual({
      'GET /users/:id': [
        'enum $.status: new value "suspended" (the mock sends "active")',
        'type $.age: type number → string',
        'renamed $.name: renamed to $.full_name (string)',
        'added $.email: new in the upstream (string)',
        'added $.tags[].color: new in the upstream (string)',
      ],
      'GET /orders': ['enum $.data[].status: new value "refunded" (the mock sends "paid", "pending")'],
      'GET /plans/:id': ['status status: mock 200, upstream 202'],
      'GET /report': ['content-type content-type: mock text/csv, upstream text/plain'],
      'POST /charges': 'skipped',
    });
    expect(reportOf(r).summary).toMatchObject({ same: 0, drift: 4, failed: 0, skipped: 1 });

    const table = await verify();
    expect(table.code).toBe(1);
    expect(table.stdout.split('\n')).toEqual([
      'drift    GET /users/:id  /users/42',
      '         $.status        new value "suspended" (the mock sends "active")',
      '         $.age           type number → string',
      '         $.name          renamed to $.full_name (string)',
      '         $.email         new in the upstream (string)',
      '         $.tags[].color  new in the upstream (string)',
      'drift    GET /orders     /orders?limit=2',
      '         $.data[].status  new value "refunded" (the mock sends "paid", "pending")',
      'drift    GET /plans/:id  /plans/basic',
      '         status  mock 200, upstream 202',
      'drift    GET /report     /report',
      '         content-type  mock text/csv, upstream text/plain',
      'skipped  POST /charges   /charges  POST is not sent without --allow-unsafe (it may change data on the real API)',
      '',
      `0 same, 4 drift, 0 failed, 1 skipped: 5 examples of 5 endpoints against ${up.url}`,
      '',
    ]);

    const before = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    const mine = before.slice(before.indexOf('  # my own endpoints'));
    const update = await verify(['--update']);
    expect(update.code).toBe(1); // two drifted endpoints are the user's: not updated
    expect(update.stderr).toContain('  not updated: GET /plans/:id: written by hand: --update never changes it\n');
    expect(update.stderr).toContain('  not updated: GET /report: written by hand: --update never changes it\n');
    expect(update.stderr).toContain('  updated GET /users/:id (1 request)\n');
    const after = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(after.slice(after.indexOf('  # my own endpoints'))).toBe(mine);
    expect(after.startsWith("# the team's mock of the billing API\n")).toBe(true);
    expect(changesOf(await verify(['--json']))).toMatchObject({
      'GET /users/:id': 'same',
      'GET /orders': 'same',
      'GET /plans/:id': ['status status: mock 200, upstream 202'],
    });
  });

  it('--update writes what drifted through the recording merge; a second run is the same; the ignore list stays', async () => {
    await writeConfig(dir.path, configFor(up.url));
    mode = 'recorded-drift';
    expect((await verify()).code).toBe(1);
    const update = await verify(['--update']);
    expect(update.stderr).toBe(
      `--update:\n2 requests recorded into 2 endpoints of mockapi.yaml\n  updated GET /users/:id (1 request)\n  updated GET /orders (1 request)\n`,
    );
    expect(update.code).toBe(0);
    const text = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(text).toContain('        full_name: User 42\n        status: suspended\n');
    expect(text).toContain(
      '    verify:\n      request:\n        params:\n          id: "42"\n      expect: 200\n      ignore:\n        - created\n',
    );
    const second = await verify();
    expect(second.stdout).toContain(
      `4 same, 0 drift, 0 failed, 1 skipped: 5 examples of 5 endpoints against ${up.url}\n`,
    );
    expect(second.code).toBe(0);
    expect(await runCli(['validate', '-c', 'mockapi.yaml'], { cwd: dir.path })).toMatchObject({ code: 0 });
  });

  it('--update with a drift the merge leaves out (the upstream answers only 404): exit 1, not "written", the drift named', async () => {
    // GET /a and GET /b drift with a 200 the merge takes in; GET /status answers only 404, which a
    // recording leaves out unless recording.recordNotFound: the config cannot be "up to date".
    const real = await startUpstream((req, res) => {
      if (req.url === '/status') return send(res, 404, { error: 'nf' });
      send(res, 200, { ok: true, renamed: req.url });
    });
    try {
      const endpoint = (path: string) => `  - recorded: GET ${path}
    method: GET
    path: ${path}
    response: { status: 200, headers: { content-type: application/json; charset=utf-8 }, body: { ok: true } }
    verify: { expect: 200 }
`;
      const configOf = (paths: string[]) =>
        `project: upd\napiKey: ${KEY}\nupstream: { url: ${real.url} }\nendpoints:\n${paths.map(endpoint).join('')}`;
      const skipped =
        'GET /status: the upstream answered only 404 (1 request; recording.recordNotFound: true keeps it)';

      // Only the endpoint that cannot be written: nothing written, exit 1.
      await writeConfig(dir.path, configOf(['/status']));
      const before = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
      const alone = await verify(['--update', '--json']);
      expect(JSON.parse(alone.stdout).update).toEqual({
        written: false,
        notUpdated: [skipped],
        lines: [
          '--update:',
          '1 request recorded into 0 endpoints of mockapi.yaml',
          `  skipped ${skipped}`,
          'nothing was written; mockapi.yaml was left unchanged',
        ],
      });
      expect(alone.stderr).not.toContain('is up to date');
      expect(alone.code).toBe(1);
      expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toBe(before);

      // Three drifted, two written, one left out: written, but exit 1 and the third named.
      await writeConfig(dir.path, configOf(['/a', '/status', '/b']));
      const some = await verify(['--update', '--json']);
      const update = JSON.parse(some.stdout).update;
      expect(update).toMatchObject({ written: true, notUpdated: [skipped] });
      expect(update.lines).toContain('  updated GET /a (1 request)');
      expect(update.lines).toContain('  updated GET /b (1 request)');
      expect(update.lines).toContain(`  skipped ${skipped}`);
      expect(some.code).toBe(1);
      expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toContain('renamed: /a');
    } finally {
      await real.close();
    }
  });

  it('an upstream that refuses connections: failed with the reason, exit 1, no stack', async () => {
    const closed = await startUpstream(() => undefined);
    const url = closed.url;
    await closed.close();
    await writeConfig(dir.path, configFor(url));
    const r = await verify(['--json']);
    expect(r.code).toBe(1);
    const results = reportOf(r).results.filter((x) => x.result !== 'skipped');
    expect(results).toHaveLength(4);
    for (const x of results)
      (expect(x).toMatchObject({
        result: 'failed',
        reason: expect.stringMatching(new RegExp(`^${url} could not be reached: .*ECONNREFUSED`)),
      }),
        expect(x.changes).toEqual([]));
    expectNoStack(r);
  });

  it('an upstream that never answers: failed after upstream.timeout (or --timeout), exit 1', async () => {
    await writeConfig(dir.path, configFor(up.url).replace('  auth:', '  timeout: 300ms\n  auth:'));
    mode = 'hang';
    const r = await verify();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`failed   GET /users/:id  /users/42  ${up.url} did not answer within 300 ms\n`);
    expect(r.stdout).toContain('same     GET /orders     /orders?limit=2\n');
    const flag = await verify(['--timeout', '200ms', '--only', 'GET /users/*']);
    expect(flag.stdout).toContain(`failed   GET /users/:id  /users/42  ${up.url} did not answer within 200 ms\n`);
    expect(flag.code).toBe(1);
    expectNoStack(flag);
  });

  it('an event stream: compared when it ends, failed (and closed) when it does not end in time', async () => {
    const streaming = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/events/short') return void res.end('data: hi\n\n');
      const beat = setInterval(() => res.write(': beat\n\n'), 20); // never ends, never silent
      res.on('close', () => clearInterval(beat));
    });
    try {
      await writeConfig(
        dir.path,
        `apiKey: ${KEY}\nupstream: { url: "${streaming.url}", timeout: 400ms }\nendpoints:\n  - method: GET\n    path: /events/:name\n    response: { stream: { format: sse, events: [{ data: hi }] } }\n    verify: [{ request: { params: { name: short } } }, { request: { params: { name: endless } } }]\n`,
      );
      const r = await verify();
      expect(r.stdout.split('\n').slice(0, 2)).toEqual([
        'same     GET /events/:name (#1)  /events/short',
        `failed   GET /events/:name (#2)  /events/endless  the upstream's event stream did not end within 400 ms (or 16 MiB)`,
      ]);
      expect(r.code).toBe(1);
    } finally {
      await streaming.close();
    }
  });

  it('an upstream whose certificate is from a CA nobody trusts: failed, never ignored', async () => {
    const ca = await ensureProjectCa(join(dir.path, 'elsewhere'));
    const leaf = await issueLeaf(ca, ['127.0.0.1', 'localhost']);
    const https = await startHttpsUpstream(leaf, answer);
    try {
      await writeConfig(dir.path, configFor(https.url));
      const r = await verify(['--only', 'GET /users/*']);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        new RegExp(
          `^failed {3}GET /users/:id {2}/users/42 {2}${https.url} could not be reached: .*(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT)`,
        ),
      );
      expect(https.seen).toEqual([]);
      expectNoStack(r);
    } finally {
      await https.close();
    }
  });

  it('the upstream key is never printed or written, even when the upstream sends it back', async () => {
    await writeConfig(dir.path, configFor(up.url));
    mode = 'leak';
    const table = await verify();
    const json = await verify(['--json']);
    const update = await verify(['--update']);
    expect(json.code).toBe(1);
    expect(changesOf(json)['GET /users/:id']).toEqual([
      'enum $.status: new value "<redacted>" (the mock sends "active")',
      'added $.<redacted>: new in the upstream (boolean)',
      'added $.note: new in the upstream (string)',
    ]);
    // The recording's final scan refuses to write the key the upstream sent back.
    expect(update.code).toBe(1);
    expect(update.stderr).toContain('refused: a secret would have been written');
    const missing = await verify([], { ...NO_PROXY_ENV });
    expect(missing).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'mockapi: upstream.auth reads MOCKAPI_UP_KEY, which is not set in the environment; nothing was verified\n',
    });
    for (const r of [table, json, update]) expect(r.stdout + r.stderr).not.toContain(UP_KEY);
    expect(await writtenFiles(dir.path)).not.toContain(UP_KEY);
    expect(up.seen.length).toBeGreaterThan(0);
  });

  it('config problems are named at their line and column; nothing is sent', async () => {
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}
upstream: { url: "${up.url}" }
verify:
  ignore: ["$.a[x]"]
endpoints:
  - method: GET
    path: /users/:id
    verify:
      request:
        params: { nope: 1 }
        headers: { Authorization: Bearer abc }
  - method: GET
    path: /b
    verify: true
`,
    );
    const r = await verify();
    expect(r.stderr.split('\n')).toEqual([
      'mockapi.yaml:4:12: verify.ignore[0] has `[x]`: write `[]` for the items of a list, or a quoted field name such as ["odd name"]',
      'mockapi.yaml:9:7: endpoints[0].verify.request needs a value for each parameter of /users/:id: params.id; or a whole request.path',
      'mockapi.yaml:10:19: endpoints[0].verify.request.params.nope names no parameter of /users/:id (it has :id)',
      "mockapi.yaml:11:20: endpoints[0].verify.request.headers.Authorization is a credential header: mockapi verify sends upstream.auth to the real API and the mock's own key to the mock",
      'mockapi.yaml:14:13: endpoints[1].verify must be an example ({ request, expect, ignore }), a list of examples, or false to leave the endpoint out',
      'mockapi: mockapi.yaml is not valid; nothing was verified',
      '',
    ]);
    expect(r.code).toBe(1);
    expect(up.seen).toEqual([]);
  });

  it('without an upstream, or with no example: says so, exit 1', async () => {
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n    verify: { expect: 200 }\n`,
    );
    expect(await verify()).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'mockapi: no real API to verify against: give --upstream <url> or set upstream.url in mockapi.yaml\n',
    });
    await writeConfig(dir.path, `apiKey: ${KEY}\nendpoints:\n  - method: GET\n    path: /a\n`);
    expect(await verify(['--upstream', up.url])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no endpoint of mockapi.yaml has a verify example'),
    });
    expect(await verify(['--upstream', 'ftp://x'])).toMatchObject({ code: 2 });
  });
});

describe('record and import write verify examples', () => {
  it('a recording gives its endpoints an example that verifies the same', async () => {
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: ${up.url}\n  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }\nrecording:\n  captureRequestHeaders: [accept]\n`,
    );
    const { startServe } = await import('../helpers/cli.js');
    const rec = await startServe(['-c', 'mockapi.yaml', '--no-state', '--log', 'off'], {
      cwd: dir.path,
      env: ENV,
      command: 'record',
    });
    for (const path of ['/users/7', '/orders?limit=2']) {
      const res = await fetch(`${rec.url}/mock${path}`, { headers: { 'x-api-key': KEY, accept: 'application/json' } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(await rec.stop()).toBe(0);
    const text = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(text).toContain(
      '    verify:\n      request:\n        params:\n          id: "7"\n        headers:\n          accept: application/json\n      expect: 200\n',
    );
    expect(text).toContain(
      '    verify:\n      request:\n        query:\n          limit: "2"\n        headers:\n          accept: application/json\n      expect: 200\n',
    );
    const r = await verify();
    expect(r.stdout).toContain(`2 same, 0 drift, 0 failed: 2 examples of 2 endpoints against ${up.url}\n`);
    expect(r.code).toBe(0);
  });

  it('an import gives each operation an example from its parameters', async () => {
    const spec = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /users/{userId}:
    get:
      parameters:
        - { name: userId, in: path, required: true, schema: { type: integer }, example: 42 }
        - { name: expand, in: query, required: true, schema: { type: string, enum: [tags, none] } }
        - { name: page, in: query, schema: { type: integer } }
      responses:
        '200':
          description: ok
          content:
            application/json:
              example: { id: 42, name: User 42, status: active, age: 36, created: '2026-01-01T00:00:00Z', tags: [{ label: a, weight: 1 }] }
`;
    await writeFile(join(dir.path, 'openapi.yaml'), spec);
    await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nupstream:\n  url: ${up.url}\n  auth: { header: Authorization, value: "Bearer \${env.MOCKAPI_UP_KEY}" }\n`,
    );
    expect((await runCli(['import', 'openapi.yaml', '-c', 'mockapi.yaml'], { cwd: dir.path })).code).toBe(0);
    const text = await readFile(join(dir.path, 'mockapi.yaml'), 'utf8');
    expect(text).toContain(
      '    verify:\n      request:\n        params:\n          userId: 42\n        query:\n          expand: tags\n      expect: 200\n',
    );
    const r = await verify();
    expect(r.stdout).toContain('same     GET /users/:userId  /users/42?expand=tags\n');
    expect(r.code).toBe(0);
    // The user's own verify (an ignore list here) survives the next import.
    await writeFile(
      join(dir.path, 'mockapi.yaml'),
      text.replace('      expect: 200\n', '      expect: 200\n      ignore: [created]\n'),
    );
    expect((await runCli(['import', 'openapi.yaml', '-c', 'mockapi.yaml'], { cwd: dir.path })).code).toBe(0);
    expect(await readFile(join(dir.path, 'mockapi.yaml'), 'utf8')).toContain('      ignore: [created]\n');
  });
});

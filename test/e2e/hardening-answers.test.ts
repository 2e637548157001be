// Reliability: one request must not crash or stall the server through its answer. Black-box
// against the built CLI on port 0: request bodies nested deeper than answers may walk, `matches`
// patterns that backtrack exponentially elsewhere (a linear-time engine here; what it cannot run is
// refused with the config), and answers whose size the request decides.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, tempDir, writeConfig } from '../helpers/cli.js';
import { KEY, serveDynamic, type DynamicServer } from '../helpers/dynamic.js';

const CONFIG = `apiKey: ${KEY}
seed: 3
endpoints:
  - method: POST
    path: /json
    response: { body: { got: "\${json(body)}" } }
  - method: POST
    path: /text
    response: { body: { got: "\${body}" } }
  - method: POST
    path: /contains
    responses:
      - { when: { body: { contains: x } }, body: "yes" }
      - body: "no"
  - method: POST
    path: /matches
    responses:
      - { when: { body: { matches: "^\\\\[+" } }, body: "yes" }
      - body: "no"
  - method: POST
    path: /includes
    responses:
      - { when: { body: { includes: { a: 1 } } }, body: "yes" }
      - body: "no"
  - method: POST
    path: /seed
    seedBy: \${json(body)}
    response: { body: { id: "\${uuid()}" } }
  - method: POST
    path: /parsed
    responses:
      - { when: { body.a: { exists: true } }, body: json }
      - body: text
`;

const JSON_HEADERS = { 'content-type': 'application/json' };
/** `{"a":{"a":…1…}}`, `depth` objects deep. */
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** `[[[…"x"…]]]`, `depth` lists deep. */
const deepList = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;

let server: DynamicServer;

beforeAll(async () => {
  server = await serveDynamic(CONFIG, ['--no-state', '--no-watch']);
});

afterAll(stopAll);

const post = (path: string, body: string) => server.call(path, { method: 'POST', headers: JSON_HEADERS, body });

describe('a JSON body nested deeper than 128 levels is read as text', () => {
  const list = deepList(4500); // 9 KB

  test('${json(body)} and ${body} give the text', async () => {
    expect(await post('/json', list)).toMatchObject({
      status: 200,
      text: JSON.stringify({ got: JSON.stringify(list) }),
    });
    expect(await post('/text', list)).toMatchObject({ status: 200, text: JSON.stringify({ got: list }) });
  });

  test('matchers test the text', async () => {
    expect(await post('/contains', list)).toMatchObject({ status: 200, text: 'yes' });
    expect(await post('/matches', list)).toMatchObject({ status: 200, text: 'yes' });
    expect(await post('/includes', deepObject(4500))).toMatchObject({ status: 200, text: 'no' });
  });

  test('seedBy reads the text: the same body, the same values', async () => {
    const first = await post('/seed', deepObject(4500));
    expect(first.status).toBe(200);
    expect((await post('/seed', deepObject(4500))).text).toBe(first.text);
  });

  test('128 levels are JSON, 129 are text', async () => {
    expect((await post('/parsed', deepObject(128))).text).toBe('json');
    expect((await post('/parsed', deepObject(129))).text).toBe('text');
    // brackets inside strings do not count
    expect((await post('/parsed', `{"a":"${'['.repeat(500)}"}`)).text).toBe('json');
    expect((await post('/parsed', `{"a":"\\"${'['.repeat(500)}"}`)).text).toBe('json');
  });

  test('the journal notes why', async () => {
    await post('/parsed', deepObject(129));
    const [entry] = (
      (await (await fetch(`${server.proc.url}/__mockapi/requests?limit=1`)).json()) as {
        requests: Array<{ body: string; notes: string[] }>;
      }
    ).requests;
    expect(entry).toMatchObject({
      body: deepObject(129),
      notes: ['JSON body nested deeper than 128 levels: read as text'],
    });
  });

  test('the server is still up, and printed no error', async () => {
    expect(server.proc.child.exitCode).toBeNull();
    expect((await fetch(`${server.proc.url}/__mockapi/health`)).status).toBe(200);
    expect(server.proc.stderr()).toBe('');
  });
});

describe('`matches` runs on a linear-time engine: what backtracks elsewhere answers at once; what it cannot run is a config error', () => {
  const REFUSED = `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /ids
    responses:
      - { when: { query.pair: { matches: "^(\\\\w)\\\\1$" } }, body: pair }
      - when:
          headers.x-tag: { not: { matches: "/^(?=a)b/i" } }
        body: tag
      - { when: { query.host: { matches: '^([a-z0-9]{1,63}\\.?){1,10}$' } }, body: host }
`;
  const PAIR =
    'endpoints[0].responses[0].when["query.pair"].matches uses a backreference, which cannot be matched in linear time (invalid escape sequence: `\\1`)';
  const TAG =
    'endpoints[0].responses[1].when["headers.x-tag"].not.matches uses lookahead or lookbehind, which cannot be matched in linear time (invalid or unsupported Perl syntax: `(?=`)';
  const HOST =
    'endpoints[0].responses[2].when["query.host"].matches is too large to be matched quickly (1303 instructions once compiled, at most 256): use fewer or smaller counted repeats such as {1,63}';

  test('validate names each at its line and column', async () => {
    const file = await writeConfig(await tempDir(), REFUSED);
    const { code, stdout, stderr } = await runCli(['validate', '-c', file]);
    expect(code).toBe(1);
    expect(
      (stdout + stderr)
        .trim()
        .split('\n')
        .map((line) => line.replace(`${file}:`, 'F:')),
    ).toEqual([`F:6:42: ${PAIR}`, `F:8:44: ${TAG}`, `F:10:42: ${HOST}`]);
  });

  test('patterns that backtrack exponentially in JavaScript answer adversarial input at once', async () => {
    const server = await serveDynamic(
      `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /ids
    responses:
      - { when: { query.ids: { matches: "^(\\\\d+,?)+$" } }, body: ids }
      - { when: { headers.x-tag: { matches: "/^(a|aa)+$/i" } }, body: tag }
      - { when: { query.name: { matches: '(.*a){20}' } }, body: name }
      - { when: { query.k: { matches: "/^(?:K|\\u212A)+$/iu" } }, body: kelvin }
      - body: none
`,
      ['--no-state', '--no-watch'],
    );
    // Each of these takes seconds to minutes with a backtracking engine; the timeout names the cause.
    const call = (path: string, headers: Record<string, string> = {}) =>
      server.call(path, { headers, signal: AbortSignal.timeout(20_000) });
    expect((await call(`/ids?ids=${'1'.repeat(2000)}x`)).text).toBe('none');
    expect((await call('/ids', { 'x-tag': `${'a'.repeat(2000)}!` })).text).toBe('none');
    expect((await call(`/ids?name=${'a'.repeat(19)}`)).text).toBe('none');
    expect((await call(`/ids?k=${'k'.repeat(2000)}!`)).text).toBe('none');
    expect((await call('/ids?ids=1,22,333')).text).toBe('ids');
    expect((await call(`/ids?k=kK${encodeURIComponent('\u212A')}`)).text).toBe('kelvin');
  });

  test('a pattern tests the first 2 KiB of the text', async () => {
    const tail = await serveDynamic(
      `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /tail
    responses:
      - { when: { query.q: { matches: "END" } }, body: "yes" }
      - body: "no"
`,
      ['--no-state', '--no-watch'],
    );
    expect((await tail.call(`/tail?q=${'a'.repeat(2045)}END`)).text).toBe('yes');
    expect((await tail.call(`/tail?q=${'a'.repeat(2046)}END`)).text).toBe('no');
  });

  test('serve does not start with one it cannot run', async () => {
    const file = await writeConfig(await tempDir(), REFUSED);
    await expect(startServe(['-c', file, '--no-state'])).rejects.toThrow(
      /serve exited with 1[\s\S]*uses a backreference/,
    );
  });
});

describe('an answer is capped as a whole, not only each $repeat', () => {
  const LISTS = `apiKey: ${KEY}
endpoints:
  - method: GET
    path: /grid
    response:
      body:
        rows:
          $repeat: "\${query.rows}"
          $item: { cells: { $repeat: "\${query.cols}", $item: "\${index}" } }
  - method: POST
    path: /echo
    response:
      body: { $repeat: "\${query.n}", $item: "\${body}" }
`;
  let lists: DynamicServer;
  beforeAll(async () => {
    lists = await serveDynamic(LISTS, ['--no-state', '--no-watch']);
  });

  const ITEMS = JSON.stringify({
    error: 'internal_error',
    message: 'The answer is too large: its $repeat lists would hold more than 100000 items in all',
  });
  const TEXT = JSON.stringify({
    error: 'internal_error',
    message: 'The answer is too large: it would be longer than 16 MiB',
  });

  test('nested counts from the request: 500 at once, without building the answer', async () => {
    const started = Date.now();
    const res = await lists.call('/grid?rows=10000&cols=3000', { signal: AbortSignal.timeout(10_000) });
    expect({ status: res.status, text: res.text }).toEqual({ status: 500, text: ITEMS });
    expect(Date.now() - started).toBeLessThan(5_000); // unbounded, it took 17 s and 2 GB
    // the journal and the log say which answer and why
    const [entry] = (
      (await (await fetch(`${lists.proc.url}/__mockapi/requests?limit=1`)).json()) as {
        requests: Array<{ status: number; notes: string[] }>;
      }
    ).requests;
    expect(entry).toMatchObject({
      status: 500,
      notes: ['response: The answer is too large: its $repeat lists would hold more than 100000 items in all'],
    });
  });

  test('100,000 items in all are still made', async () => {
    const res = await lists.call('/grid?rows=100&cols=999');
    expect(res.status).toBe(200);
    const { rows } = res.json() as { rows: Array<{ cells: number[] }> };
    expect(rows).toHaveLength(100);
    expect(rows[99]?.cells).toHaveLength(999);
  });

  test('a large body repeated: 500 once the text passes 16 MiB', async () => {
    const body = 'x'.repeat(1024 * 1024 - 16); // under the 1 MiB request limit
    const res = await lists.call('/echo?n=10000', { method: 'POST', body, signal: AbortSignal.timeout(10_000) });
    expect({ status: res.status, text: res.text }).toEqual({ status: 500, text: TEXT });
    const ok = await lists.call('/echo?n=15', { method: 'POST', body });
    expect(ok.status).toBe(200);
    expect(ok.text).toHaveLength(15 * (body.length + 3) + 1);
  });
});

// Reliability: one request must not crash or stall the server through its answer. Black-box
// against the built CLI on port 0: request bodies nested deeper than answers may walk, and
// (below) answers whose size the request decides.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stopAll } from './helpers/cli.js';
import { KEY, serveDynamic, type DynamicServer } from './helpers/dynamic.js';

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
    expect(await post('/json', list)).toMatchObject({ status: 200, text: JSON.stringify({ got: JSON.stringify(list) }) });
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

  test('the server is still up, and printed no error', async () => {
    expect(server.proc.child.exitCode).toBeNull();
    expect((await fetch(`${server.proc.url}/__mockapi/health`)).status).toBe(200);
    expect(server.proc.stderr()).toBe('');
  });
});

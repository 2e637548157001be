// Hostile values in admin calls: each is refused with its own 4xx JSON error (docs/admin-api.md),
// never a 500 and never a thrown stack overflow.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { admin } from '../helpers/control.js';

const KEY = 'mk_hostileValues00000000000000001';
const dir = useTempDir('mockapi-hostile-values-');
/** A list nested 8000 deep: describing it as JSON would overflow the stack. */
const DEEP = '['.repeat(8000) + ']'.repeat(8000);
/** `{"a":…}` nested `levels` deep (`{}` is one level). */
const nested = (levels: number): unknown => (levels === 1 ? {} : { a: nested(levels - 1) });

let server: ServeProcess;
beforeAll(async () => {
  server = await startServe([
    '-c',
    await writeConfig(
      dir.path,
      [
        `apiKey: ${KEY}`,
        'webhooks:',
        '  targets:',
        '    app: { url: "http://127.0.0.1:9/hook", retry: { schedule: none } }',
        '  events:',
        '    charge.succeeded: { data: { object: { status: succeeded } } }',
        'endpoints: []',
        '',
      ].join('\n'),
    ),
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    '--clock',
    '2026-11-15T12:00:00Z',
  ]);
});
afterAll(stopAll);

describe('a value nested thousands deep', () => {
  test.each([
    ['usage', `{"requests":${DEEP}}`, 'requests must be a whole number ≥ 0, got a list'],
    ['usage', `{"meter":${DEEP}}`, 'meter must be the name of a meter, got a list'],
    ['usage', `{"meter":"m","value":${DEEP}}`, 'value must be a number from 0 to 9000000000, got a list'],
    ['usage', `{"key":${DEEP}}`, 'key must be the name of a key, got a list'],
    ['clock', `{"set":${DEEP}}`, 'set must be an ISO time such as 2026-11-30T23:59:59Z, got a list'],
    ['clock', `{"advance":${DEEP}}`, 'advance must be a duration such as 250ms, 2s, 1m, 1h or 31d, got a list'],
    [
      'webhooks/trigger',
      `{"event":"charge.succeeded","to":"app","data":${DEEP}}`,
      'data is nested more than 32 levels deep',
    ],
  ])('POST /__mockapi/%s %#: 400 bad_request naming the kind of value', async (path, body, message) => {
    const answer = await admin(server.url, 'POST', path, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'bad_request', message });
  });

  test('a trigger takes data 32 levels deep, as a resource body may be, and refuses 33', async () => {
    const trigger = (data: unknown) =>
      admin(server.url, 'POST', 'webhooks/trigger', { event: 'charge.succeeded', to: 'app', data });
    expect((await trigger(nested(32))).status).toBe(201);
    expect(await trigger(nested(33))).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: 'data is nested more than 32 levels deep' },
    });
  });
});

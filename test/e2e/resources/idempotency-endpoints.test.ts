// Idempotency keys on plain endpoints, black-box: what is kept (an answer, a simulated 500, an answer
// a fault cut) and sent again byte for byte with Idempotent-Replayed; what is not (401, a validation
// 400): the same key then runs again.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, writeConfig } from '../../helpers/cli.js';

afterAll(stopAll);

const KEY = 'mk_resourcesIdempotency000000000001';

describe('idempotency keys on endpoints', () => {
  test('kept: answers, simulated 500s, answers a fault cut; not kept: 401, validation 400s', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'openapi.json'),
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: {
          '/checked': {
            post: {
              requestBody: {
                required: true,
                content: {
                  'application/json': {
                    schema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
                  },
                },
              },
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      }),
    );
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
idempotency: true
openapi: { spec: openapi.json }
endpoints:
  - { method: POST, path: /counted, response: { body: { n: "\${request}" } } }
  - { method: POST, path: /fail, failRate: 1, response: { body: { n: "\${request}" } } }
  - { method: POST, path: /cut, faults: [{ kind: reset, rate: 1 }], response: { body: { n: "\${request}" } } }
  - { method: POST, path: /checked, validate: enforce, response: { body: { n: "\${request}" } } }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const post = async (path: string, key: string, body = '{}', apiKey = KEY) => {
      const res = await request(`${server.mock}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'idempotency-key': key, 'content-type': 'application/json' },
        body,
      });
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: await res.body.text() };
    };
    expect(await post('/counted', 'a')).toEqual({ status: 200, replayed: undefined, body: '{"n":1}' });
    expect(await post('/counted', 'a')).toEqual({ status: 200, replayed: 'true', body: '{"n":1}' });
    expect((await post('/counted', 'b')).body).toBe('{"n":2}');

    const failed = await post('/fail', 'c');
    expect(failed.status).toBe(500);
    expect(await post('/fail', 'c')).toEqual({ ...failed, replayed: 'true' });

    await expect(post('/cut', 'd')).rejects.toThrow();
    expect(await post('/cut', 'd')).toEqual({ status: 200, replayed: 'true', body: '{"n":1}' });

    expect((await post('/counted', 'e', '{}', 'mk_wrong')).status).toBe(401);
    expect(await post('/counted', 'e')).toEqual({ status: 200, replayed: undefined, body: '{"n":3}' });

    const invalid = await post('/checked', 'f', '{"amount":"x"}');
    expect([invalid.status, invalid.replayed]).toEqual([422, undefined]);
    expect((await post('/checked', 'f', '{"amount":"x"}')).replayed).toBeUndefined();
    expect(await post('/checked', 'f', '{"amount":5}')).toEqual({ status: 200, replayed: undefined, body: '{"n":1}' });

    const journal = (await (await fetch(`${server.url}/__mockapi/requests?path=/mock/counted`)).json()) as {
      requests: Array<{ status: number; notes: string[] }>;
    };
    expect(journal.requests[1]?.notes).toEqual(["idempotent replay: the answer to the key's first request"]);
  });

  test('while the first request is answered (a delay), the same key is a 409 idempotency_error; after it, a replay', async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
idempotency: true
endpoints:
  - { method: POST, path: /slow, delay: 400ms, response: { body: { n: "\${request}" } } }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const post = async () => {
      const res = await request(`${server.mock}/slow`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'idempotency-key': 'same', 'content-type': 'application/json' },
        body: '{}',
      });
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: await res.body.text() };
    };
    // Both sent at once: whichever the server takes first is answered after its delay, the other meets the key in use.
    const both = await Promise.all([post(), post()]);
    const answered = both.find((a) => a.status === 200);
    const refused = both.find((a) => a.status === 409);
    expect(answered).toEqual({ status: 200, replayed: undefined, body: '{"n":1}' });
    expect(JSON.parse(refused?.body ?? '{}').error.type).toBe('idempotency_error');
    expect(await post()).toEqual({ status: 200, replayed: 'true', body: '{"n":1}' });
  });

  test("a resource's 400 for a body it cannot read (a value of the wrong type, malformed JSON, a refused key) is not kept: the same key with a corrected body creates", async () => {
    const dir = await tempDir();
    const file = await writeConfig(
      dir,
      `apiKey: ${KEY}
server: { basePath: /v1 }
resources:
  payment_intents:
    style: stripe
    path: /payment_intents
    fields: { object: payment_intent, amount: 0, metadata: {} }
`,
    );
    const server = await startServe(['-c', file], { cwd: dir });
    const post = async (key: string, body: string, type = 'application/x-www-form-urlencoded') => {
      const res = await request(`${server.url}/v1/payment_intents`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'idempotency-key': key, 'content-type': type },
        body,
      });
      const text = await res.body.text();
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], json: JSON.parse(text) };
    };
    for (const [key, body, type] of [
      ['typed', 'amount=abc', undefined],
      ['json', '{bad', 'application/json'],
      ['proto', '{"__proto__":{"x":1}}', 'application/json'],
    ] as const) {
      const refused = await post(key, body, type);
      expect([refused.status, refused.replayed, refused.json.error.type]).toEqual([
        400,
        undefined,
        'invalid_request_error',
      ]);
      expect((await post(key, body, type)).replayed).toBeUndefined(); // run again, not replayed
      const made = await post(key, 'amount=5');
      expect([made.status, made.replayed, made.json.amount]).toEqual([200, undefined, 5]);
      expect((await post(key, 'amount=5')).replayed).toBe('true');
    }
  });
});

// `server.headers` through the built CLI: headers on every answer to a mock request (the configured
// answers, mockapi's own refusals, stubs, streams, the 404 outside the base path), none on health
// and admin calls; values made per request, their random values drawn from the seed; an answer's own
// header of the same name wins; exposed through CORS; mistakes located; and without it, answers
// exactly as before (no request id by default).
import { request } from 'node:http';
import { afterAll, describe, expect, test } from 'vitest';
import { runCli, startServe, stopAll, useTempDir, writeConfig, type ServeProcess } from '../helpers/cli.js';

afterAll(stopAll);

const KEY = 'mk_serverHeaders000000000000000001';
const dir = useTempDir('mockapi-server-headers-', { each: true });

const HEADERS = `server:
  headers:
    x-request-id: "req_\${randomHex(32)}"
    x-request-n: "\${request}"
    api-version: 2024-06-20
    x-echo: "\${query.echo}"
`;
const ENDPOINTS = `limits:
  rateLimit: { requests: 4, window: 1h }
endpoints:
  - { method: GET, path: /ok, response: { body: { ok: true } } }
  - { method: GET, path: /own, response: { headers: { X-Request-Id: mine }, body: { own: true } } }
  - { method: GET, path: /fail, failRate: 1 }
  - method: GET
    path: /stream
    response: { stream: { format: ndjson, gap: 0, events: [{ data: { n: 1 } }] } }
`;

async function serve(yaml: string, extra: string[] = []): Promise<ServeProcess> {
  return startServe([
    '-c',
    await writeConfig(dir.path, `apiKey: ${KEY}\n${yaml}`),
    '--no-state',
    '--no-watch',
    '--log',
    'off',
    ...extra,
  ]);
}

interface Answer {
  status: number;
  /** Names and values as sent, in order (names lower-cased). */
  raw: Array<[string, string]>;
  body: string;
}

/** One request, its answer's headers exactly as sent. */
function call(url: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          raw.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, raw, body: Buffer.concat(chunks).toString() });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const named = (a: Answer, name: string): string[] => a.raw.filter(([n]) => n === name).map(([, v]) => v);
const auth = { 'x-api-key': KEY };

describe('server.headers', () => {
  test(
    'every answer to a mock request carries them, made per request; health and admin calls do not',
    { timeout: 30_000 },
    async () => {
      const s = await serve(HEADERS + ENDPOINTS);
      const stub = await fetch(`${s.url}/__mockapi/stubs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: { method: 'GET', path: '/stubbed', response: { status: 202 } } }),
      });
      expect(stub.status).toBe(201);
      const answers = [
        await call(`${s.mock}/ok?echo=hi`, { headers: auth }), // 200
        await call(`${s.mock}/fail`, { headers: auth }), // the simulated 500
        await call(`${s.mock}/stream`, { headers: auth }), // a stream
        await call(`${s.mock}/stubbed`, { headers: auth }), // a stub
        await call(`${s.mock}/ok`, { headers: auth }), // 429: the window holds 4
        await call(`${s.mock}/nope`, { headers: auth }), // 404, after the 429's limits: refused before match
        await call(`${s.mock}/ok`), // 401
        await call(`${s.url}/elsewhere`), // 404 outside the base path
        await call(`${s.mock}/ok`, {
          method: 'OPTIONS',
          headers: { origin: 'http://app.test', 'access-control-request-method': 'GET' },
        }), // preflight
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 500, 200, 202, 429, 429, 401, 404, 204]);
      answers.forEach((a, i) => {
        expect(named(a, 'x-request-id'), `answer ${i}`).toEqual([expect.stringMatching(/^req_[0-9a-f]{32}$/)]);
        expect(named(a, 'x-request-n'), `answer ${i}`).toEqual([String(i + 1)]);
        expect(named(a, 'api-version'), `answer ${i}`).toEqual(['2024-06-20']);
      });
      expect(named(answers[0]!, 'x-echo')).toEqual(['hi']);
      expect(named(answers[1]!, 'x-echo')).toEqual(['']);
      expect(new Set(answers.map((a) => named(a, 'x-request-id')[0])).size).toBe(answers.length);
      for (const path of ['/__mockapi/health', '/__mockapi/requests', '/__mockapi/'])
        expect(named(await call(`${s.url}${path}`), 'x-request-id'), path).toEqual([]);
      // The journal keeps them with each answer.
      const { requests } = (await (await fetch(`${s.url}/__mockapi/requests`)).json()) as {
        requests: Array<{ responseHeaders: Record<string, string> }>;
      };
      expect(requests.map((e) => e.responseHeaders['x-request-id'])).toEqual(
        answers.map((a) => named(a, 'x-request-id')[0]),
      );
    },
  );

  test("an answer's own header of the same name is the one sent; CORS exposes them; what no header may carry is dropped", async () => {
    const s = await serve(HEADERS + ENDPOINTS);
    const own = await call(`${s.mock}/own`, { headers: auth });
    expect(named(own, 'x-request-id')).toEqual(['mine']);
    expect(named(own, 'api-version')).toEqual(['2024-06-20']);
    const cors = await call(`${s.mock}/ok?echo=a%0D%0Ab%00c`, { headers: { ...auth, origin: 'http://app.test' } });
    expect(named(cors, 'access-control-expose-headers')).toEqual([
      'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, x-request-id, x-request-n, api-version, x-echo',
    ]);
    expect(named(cors, 'x-echo')).toEqual(['abc']);
  });

  test("their random values are the seed's: the n-th request gets the same id on every run; without a seed they differ", async () => {
    const ids = async (extra: string[]): Promise<string[]> => {
      const s = await serve(HEADERS + ENDPOINTS, extra);
      const got: string[] = [];
      for (let i = 0; i < 3; i++)
        got.push(named(await call(`${s.mock}/ok`, { headers: i === 1 ? {} : auth }), 'x-request-id')[0]!);
      await s.stop();
      return got;
    };
    const first = await ids(['--seed', '7']);
    expect(await ids(['--seed', '7'])).toEqual(first);
    expect(await ids(['--seed', '8'])).not.toEqual(first);
    const unseeded = await ids([]);
    expect(unseeded).not.toEqual(await ids([]));
  });

  test('without server.headers an answer is what it was: no request id, the same header list', async () => {
    const s = await serve(ENDPOINTS);
    const ok = await call(`${s.mock}/ok`, { headers: auth });
    expect(ok.raw.map(([name]) => name)).toEqual([
      'content-type',
      'content-length',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'access-control-allow-origin',
      'access-control-expose-headers',
      'date',
      'connection',
      'keep-alive',
    ]);
    const refused = await call(`${s.mock}/ok`);
    expect(refused.raw.map(([name]) => name)).toEqual([
      'content-type',
      'content-length',
      'www-authenticate',
      'access-control-allow-origin',
      'access-control-expose-headers',
      'date',
      'connection',
      'keep-alive',
    ]);
    expect(refused.body).toBe('{"error":"Unauthorized","message":"No API key provided"}');
  });

  test('mistakes are config errors at their line and column', async () => {
    const file = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nserver:\n  headers:\n    content-length: "5"\n    x-a: "\${params.id}"\n    x-b: "id \${body.id}"\n    x-c: "\${reqest}"\n    X-A: again\nendpoints: []\n`,
    );
    const result = await runCli(['validate', '-c', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `${file}:4:5: server.headers.content-length cannot be set here: \`content-length\` frames the message or the connection, which every answer sets for itself`,
    );
    expect(result.stderr).toContain(
      `${file}:5:13: server.headers.x-a \`params\` cannot be read in \`server.headers\`: they are made for every answer, before an endpoint matched (a 401 and a 404 included)`,
    );
    expect(result.stderr).toContain(
      `${file}:6:16: server.headers.x-b \`body\` cannot be read in \`server.headers\`: they are made when a request arrives, before its body is read`,
    );
    expect(result.stderr).toContain(
      `${file}:7:13: server.headers.x-c unknown source \`reqest\`; did you mean \`request\`?`,
    );
    expect(result.stderr).toContain(
      `${file}:8:5: server.headers.X-A repeats the header \`x-a\` (header names are case-insensitive); keep one`,
    );
  });
});

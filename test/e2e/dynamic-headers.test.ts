// The header lists of dynamic answers (SPEC §7 with §3's limit headers and CORS), exactly and in
// order, through a real `mockapi serve`: a fixed answer reuses one prepared list whose RateLimit-*
// values are written per request, so each answer must carry its own request's values, never an
// earlier one's, whether or not an Origin is echoed.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stopAll } from '../helpers/cli.js';
import { KEY, serveDynamic, type DynamicServer } from '../helpers/dynamic.js';

const CONFIG = `apiKey: ${KEY}
limits:
  rateLimit: { requests: 50, window: 1h }
endpoints:
  - method: GET
    path: /items/:id
    responses:
      - { when: { params.id: "1" }, headers: { x-kind: one }, body: { id: 1 } }
      - body:
          id: \${int(params.id)}
`;

/** Status and raw header pairs (minus Date, Connection, Keep-Alive) of a GET, and its body. */
function get(
  server: DynamicServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: string[][]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.proc.mock}${path}`, { headers: { 'x-api-key': KEY, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const pairs: string[][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string]);
        resolve({
          status: res.statusCode ?? 0,
          headers: pairs.filter(
            ([name]) => !['date', 'connection', 'keep-alive'].includes((name as string).toLowerCase()),
          ),
          body,
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const EXPOSE = ['access-control-expose-headers', 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After'];
/** The RateLimit-* headers of an answer with `remaining` requests left in the window. */
const limitsWith = (remaining: number): string[][] => [
  ['RateLimit-Limit', '50'],
  ['RateLimit-Remaining', String(remaining)],
  ['RateLimit-Reset', expect.stringMatching(/^\d+$/) as unknown as string],
];
/** The CORS headers an answer ends with: `*` without an Origin, the Origin echoed (and Vary) with one. */
const corsFor = (origin: string | undefined): string[][] =>
  origin === undefined
    ? [['access-control-allow-origin', '*'], EXPOSE]
    : [['access-control-allow-origin', origin], ['vary', 'Origin'], EXPOSE];

describe('dynamic answers: the header list of each answer', () => {
  let server: DynamicServer;
  beforeAll(async () => {
    server = await serveDynamic(CONFIG);
  });
  afterAll(stopAll);

  test('a fixed answer carries each request its own RateLimit-Remaining, with and without an Origin', async () => {
    let remaining = 50;
    for (let round = 0; round < 6; round++) {
      const origin = round % 3 === 2 ? 'http://app.test' : undefined;
      const res = await get(server, '/items/1', origin === undefined ? {} : { origin });
      remaining--;
      expect(res.status).toBe(200);
      expect(res.body).toBe('{"id":1}');
      expect(res.headers).toEqual([
        ['x-kind', 'one'],
        ['content-type', 'application/json; charset=utf-8'],
        ['content-length', '8'],
        ...limitsWith(remaining),
        ...corsFor(origin),
      ]);
    }
  });

  test('a rendered answer carries its own list, the limit headers and CORS, once each, request after request', async () => {
    const before = Number(
      (await get(server, '/items/7')).headers.find(([name]) => name === 'RateLimit-Remaining')?.[1],
    );
    for (let round = 0; round < 6; round++) {
      const origin = round % 3 === 2 ? 'http://app.test' : undefined;
      const res = await get(server, '/items/42', origin === undefined ? {} : { origin });
      expect(res.body).toBe('{"id":42}');
      expect(res.headers).toEqual([
        ['content-type', 'application/json; charset=utf-8'],
        ['content-length', '9'],
        ...limitsWith(before - round - 1),
        ...corsFor(origin),
      ]);
    }
  });

  test('a rendered answer between two fixed ones does not disturb their list', async () => {
    const first = await get(server, '/items/1');
    const rendered = await get(server, '/items/42');
    const second = await get(server, '/items/1');
    const remainingOf = (res: { headers: string[][] }) =>
      Number(res.headers.find(([name]) => name === 'RateLimit-Remaining')?.[1]);
    expect(rendered.body).toBe('{"id":42}');
    expect(rendered.headers.slice(0, 2)).toEqual([
      ['content-type', 'application/json; charset=utf-8'],
      ['content-length', '9'],
    ]);
    expect([remainingOf(first), remainingOf(rendered), remainingOf(second)]).toEqual([
      remainingOf(first),
      remainingOf(first) - 1,
      remainingOf(first) - 2,
    ]);
  });
});

// SPEC §10's early retries with SPEC §12's `serve --workers`: a Retry-After given by one worker is
// known to every worker, so a client coming back early is noted whichever worker answers it;
// GET /__mockapi/clients answers for the whole server from any worker; the stop summary is printed once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempDir, type ServeProcess } from '../helpers/cli.js';
import { call } from '../helpers/workers.js';
import { startWorkersServe, type WorkersServe } from '../helpers/workers-serve.js';

const KEY = 'mk_workers_clients_key_0123456789';
/** Retries after the first 429: on fresh connections, node:cluster hands them to the workers in turn. */
const RETRIES = 40;
const dir = useTempDir('mockapi-workers-clients-');
let serve: ServeProcess;
let own: string[];

const CONFIG = `project: workers-clients
apiKey: ${KEY}
limits:
  rateLimit: { requests: 1, window: 1h }
endpoints:
  - method: GET
    path: /a
    response:
      body: { ok: true }
`;

/** The request's note, after the 429's own ("rate limited; early retry: …"). */
const EARLY = /(^|; )early retry: \d+ ms before Retry-After$/;

let workers: WorkersServe | undefined;
beforeAll(async () => {
  workers = await startWorkersServe(dir.path, CONFIG);
  ({ serve, own } = workers);
});
afterAll(() => workers?.stop());

describe('serve --workers: early retries cover every worker (SPEC §10, §12)', () => {
  it('notes every early retry whatever worker it reaches, lists the clients merged from any worker, and sums up once on stop', async () => {
    const mockCall = () => call(serve.url, 'GET', '/mock/a', { headers: { 'x-api-key': KEY } });
    expect((await mockCall()).status).toBe(200);
    // The first 429 gives a Retry-After of up to an hour; every retry after it comes back early.
    for (let i = 0; i <= RETRIES; i++) expect((await mockCall()).status).toBe(429);

    const entries = (await call(serve.url, 'GET', '/__mockapi/requests')).body.requests as {
      status: number;
      notes: string[];
    }[];
    expect(entries.map((e) => e.status)).toEqual([200, ...Array<number>(RETRIES + 1).fill(429)]);
    expect(entries.map((e) => e.notes.some((n) => EARLY.test(n)))).toEqual([
      false,
      false,
      ...Array<boolean>(RETRIES).fill(true),
    ]);

    // The same merged list from the shared port and from each worker's own, asked several times.
    const lists = [];
    for (let i = 0; i < 3; i++)
      for (const url of [serve.url, ...own]) lists.push((await call(url, 'GET', '/__mockapi/clients')).body);
    const [first] = lists as [unknown];
    expect(first).toEqual([
      {
        client: expect.stringMatching(/^x-api-key:[0-9a-f]{12}@(127\.0\.0\.1|::ffff:127\.0\.0\.1)$/),
        requests: RETRIES + 1,
        retryAfterGiven: RETRIES + 1,
        earlyRetries: RETRIES,
        worstEarlyMs: expect.any(Number),
      },
    ]);
    for (const list of lists) expect(list).toEqual(first);

    expect(await serve.stop('SIGTERM')).toBe(0);
    const stderr = serve.stderr();
    expect(stderr.match(/early retries: /g)).toHaveLength(1);
    expect(stderr).toMatch(
      new RegExp(
        `early retries: 1 of 1 clients came back before Retry-After\\n\\s+x-api-key:[0-9a-f]{12}@\\S+: ${RETRIES} early of ${RETRIES + 1} Retry-After given, worst \\d+ ms early \\(${RETRIES + 1} requests\\)`,
      ),
    );
  });
});

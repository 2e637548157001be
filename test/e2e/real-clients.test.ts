// Clients nobody here wrote — got, ky, undici's RetryAgent and ofetch — against a rate-limited mock:
// what mockapi reports about them (SPEC §10 early retries) is docs/resilience.md's "How popular clients
// behave" table. A 1-second window keeps each Retry-After at 1 s.
import got from 'got';
import ky from 'ky';
import { ofetch } from 'ofetch';
import { Agent, RetryAgent, request } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_realClients00000000000000000001';
const HEADERS = { 'x-api-key': KEY };
afterAll(stopAll);

interface ClientRow {
  requests: number;
  retryAfterGiven: number;
  earlyRetries: number;
}

async function serve(limits: string): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-real-clients-');
  return startServe([
    '-c',
    await writeConfig(dir, `apiKey: ${KEY}\nlimits:\n${limits}\nendpoints:\n  - { method: GET, path: /x }\n`),
    '--no-state',
    '--no-watch',
  ]);
}

async function report(proc: ServeProcess): Promise<ClientRow | undefined> {
  const rows = (await (await fetch(`${proc.url}/__mockapi/clients`)).json()) as ClientRow[];
  return rows[0];
}

/** Each client calls a mock whose window is already full: it gets a 429 with Retry-After: 1, then retries. */
const CALLS: Record<string, (url: string) => Promise<unknown>> = {
  got: (url) => got(url, { headers: HEADERS, retry: { limit: 2 } }).then((r) => r.statusCode),
  ky: (url) => ky(url, { headers: HEADERS, retry: 2 }).then((r) => r.status),
  'undici RetryAgent': (url) =>
    request(url, { headers: HEADERS, dispatcher: new RetryAgent(new Agent(), { maxRetries: 2 }) }).then(
      async (r) => (await r.body.dump(), r.statusCode),
    ),
  ofetch: (url) => ofetch.raw(url, { headers: HEADERS }).then((r) => r.status),
};

describe('a rate-limit 429 with Retry-After: 1', () => {
  for (const name of ['got', 'ky', 'undici RetryAgent']) {
    test(`${name} waits as told: no early retry, and its retry succeeds`, { timeout: 20_000 }, async () => {
      const proc = await serve('  rateLimit: { requests: 1, window: 1s }');
      expect((await fetch(`${proc.mock}/x`, { headers: HEADERS })).status).toBe(200);
      expect(await CALLS[name]!(`${proc.mock}/x`)).toBe(200);
      expect(await report(proc)).toMatchObject({ retryAfterGiven: 1, earlyRetries: 0, requests: 2 });
      await proc.stop();
    });
  }

  test('ofetch ignores Retry-After: its retry comes early and fails with the 429', { timeout: 20_000 }, async () => {
    const proc = await serve('  rateLimit: { requests: 1, window: 1s }');
    expect((await fetch(`${proc.mock}/x`, { headers: HEADERS })).status).toBe(200);
    await expect(CALLS.ofetch!(`${proc.mock}/x`)).rejects.toMatchObject({ statusCode: 429 });
    const row = await report(proc);
    expect(row!.earlyRetries).toBeGreaterThanOrEqual(1);
    await proc.stop();
  });
});

describe('a month-long quota Retry-After', () => {
  const WAITERS: Record<string, (url: string, signal: AbortSignal) => Promise<unknown>> = {
    got: (url, signal) => got(url, { headers: HEADERS, signal }),
    ky: (url, signal) => ky(url, { headers: HEADERS, signal }),
  };
  for (const name of Object.keys(WAITERS)) {
    test(`${name} waits for it (no early retry; it would wait until the month ends)`, { timeout: 20_000 }, async () => {
      const proc = await serve('  monthlyQuota: 1');
      expect((await fetch(`${proc.mock}/x`, { headers: HEADERS })).status).toBe(200);
      const abort = new AbortController();
      let settled = false;
      const call = WAITERS[name]!(`${proc.mock}/x`, abort.signal).then(
        () => (settled = true),
        () => (settled = true),
      );
      await waitFor(async () => ((await report(proc))?.retryAfterGiven === 1 ? true : undefined));
      const told = Date.now();
      await waitFor(() => Date.now() - told >= 1500 || undefined, 5000, 50); // a retry at Retry-After: 1 would have come by now
      expect(settled).toBe(false);
      expect(await report(proc)).toMatchObject({ retryAfterGiven: 1, earlyRetries: 0, requests: 1 });
      abort.abort();
      await call;
      await proc.stop();
    });
  }

  test(
    "undici's RetryAgent caps the wait at maxTimeout (30 s by default; 2 s here), then retries early and gives up",
    { timeout: 20_000 },
    async () => {
      const proc = await serve('  monthlyQuota: 1');
      expect((await fetch(`${proc.mock}/x`, { headers: HEADERS })).status).toBe(200);
      const outcome = await request(`${proc.mock}/x`, {
        headers: HEADERS,
        dispatcher: new RetryAgent(new Agent(), { maxRetries: 1, maxTimeout: 2000 }),
      }).then(
        async (r) => (await r.body.dump(), r.statusCode),
        (err: Error) => err.message,
      );
      expect(outcome).toBe('Request failed'); // the final 429 is not shown: an error (fetch: "fetch failed") instead
      expect(await report(proc)).toMatchObject({ retryAfterGiven: 2, earlyRetries: 1, requests: 2 });
      await proc.stop();
    },
  );

  test('ofetch retries at once and fails with the 429', async () => {
    const proc = await serve('  monthlyQuota: 1');
    expect((await fetch(`${proc.mock}/x`, { headers: HEADERS })).status).toBe(200);
    await expect(CALLS.ofetch!(`${proc.mock}/x`)).rejects.toMatchObject({ statusCode: 429 });
    expect((await report(proc))!.earlyRetries).toBe(1);
    await proc.stop();
  });
});

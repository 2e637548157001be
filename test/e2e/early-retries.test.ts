// SPEC §10's early retries: Retry-After remembered per client, a request before the moment it named
// noted with how early, counted in GET /__mockapi/clients and summed up on stderr when serve stops.
import { afterAll, describe, expect, test } from 'vitest';
import { createClientTracker, retryAfterOf, retryMoment } from '../../src/control/early-retries.js';
import { startServe, stopAll, tempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';

const KEY = 'mk_earlyRetry0000000000000000000001';
afterAll(stopAll);

interface ClientRow {
  client: string;
  requests: number;
  retryAfterGiven: number;
  earlyRetries: number;
  worstEarlyMs: number;
}

async function serve(yaml: string): Promise<ServeProcess> {
  const dir = await tempDir('mockapi-early-');
  return startServe([
    '-c',
    await writeConfig(dir, `apiKey: ${KEY}\n${yaml}`),
    '--no-state',
    '--no-watch',
    '--log',
    'json',
  ]);
}

async function call(
  proc: ServeProcess,
  path: string,
  headers: Record<string, string> = { 'x-api-key': KEY },
): Promise<Response> {
  const res = await fetch(`${proc.mock}${path}`, { headers });
  await res.arrayBuffer();
  return res;
}

async function clients(proc: ServeProcess): Promise<ClientRow[]> {
  return (await fetch(`${proc.url}/__mockapi/clients`)).json() as Promise<ClientRow[]>;
}

function notes(proc: ServeProcess): string[] {
  return proc
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { note?: string }).note ?? '');
}

describe('early retries after a rate-limit 429', () => {
  test('a retry before Retry-After is noted with how early; one after it is not', { timeout: 20_000 }, async () => {
    const proc = await serve(
      'limits:\n  rateLimit: { requests: 1, window: 2s }\nendpoints:\n  - { method: GET, path: /x }\n',
    );
    expect(await clients(proc)).toEqual([]);
    expect((await call(proc, '/x')).status).toBe(200);
    const refused = await call(proc, '/x');
    const told = Date.now();
    expect(refused.status).toBe(429);
    const seconds = Number(refused.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);

    expect((await call(proc, '/x')).status).toBe(429); // at once: early
    const line = await waitFor(() => notes(proc).find((n) => n.includes('early retry')));
    const early = Number(/(?:^|; )early retry: (\d+) ms before Retry-After$/.exec(line)![1]);
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThanOrEqual(seconds * 1000);

    let [row] = await clients(proc);
    expect(row).toMatchObject({ requests: 2, earlyRetries: 1 });
    expect(row!.client).toMatch(/^x-api-key:[0-9a-f]{12}@(127\.0\.0\.1|::ffff:127\.0\.0\.1)$/);
    expect(row!.client).not.toContain(KEY);
    expect(row!.retryAfterGiven).toBe(2);

    // Wait as told by the last Retry-After: not early.
    await waitFor(() => Date.now() >= told + 2 * seconds * 1000 + 50 || undefined, 10_000, 50);
    expect((await call(proc, '/x')).status).toBe(200);
    [row] = await clients(proc);
    expect(row).toMatchObject({ requests: 3, earlyRetries: 1 });

    expect(await proc.stop()).toBe(0);
    expect(proc.stderr()).toMatch(
      /early retries: 1 of 1 clients came back before Retry-After\n\s+x-api-key:[0-9a-f]{12}@\S+: 1 early of 2 Retry-After given, worst \d+ ms early \(3 requests\)/,
    );
  });

  test('a configured answer with retry-after counts too; bearer and x-api-key are different clients', async () => {
    const proc = await serve(
      'endpoints:\n  - method: GET\n    path: /busy\n    sequence:\n      - { status: 503, headers: { retry-after: "30" } }\n      - { status: 200 }\n',
    );
    expect((await call(proc, '/busy')).status).toBe(503);
    expect((await call(proc, '/busy')).status).toBe(200); // early: 30 s were asked
    expect((await call(proc, '/busy', { authorization: `Bearer ${KEY}` })).status).toBe(200);
    const rows = await clients(proc);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ requests: 2, retryAfterGiven: 1, earlyRetries: 1 });
    expect(rows[0]!.worstEarlyMs).toBeGreaterThan(25_000);
    await proc.stop();
  });

  test('no Retry-After given: nobody is remembered, and stop prints no summary', async () => {
    const proc = await serve('endpoints:\n  - { method: GET, path: /x }\n');
    for (let i = 0; i < 5; i++) await call(proc, '/x');
    expect(await clients(proc)).toEqual([]);
    await proc.stop();
    expect(proc.stderr()).not.toMatch(/early retr|Retry-After/);
  });
});

describe('the tracker', () => {
  test('holds at most its cap of clients, forgetting the one told longest ago', () => {
    const tracker = createClientTracker(3);
    for (let i = 0; i < 10; i++) tracker.gave(`c${i}`, '1', 0);
    expect(tracker.list().map((c) => c.client)).toEqual(['c7', 'c8', 'c9']);
  });

  test('Retry-After as an HTTP-date names that moment', () => {
    expect(retryMoment('Wed, 21 Oct 2015 07:28:00 GMT', Date.UTC(2015, 9, 21))).toBe(Date.UTC(2015, 9, 21, 7, 28));
    // Read from outside: never past what a Date holds, never before now.
    expect(retryMoment('9'.repeat(400), 1000)).toBe(1000 + 400 * 86_400_000);
    expect(retryMoment('Sat, 13 Sep 275760 00:00:00 GMT', 0)).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    expect(retryMoment('120', 1000)).toBe(121_000);
    expect(retryMoment('soon', 0)).toBeUndefined();
  });

  test("retry-after-ms (OpenAI's headers), when given, is the wait: a client that waits it is on time", () => {
    expect(retryAfterOf(['Retry-After', '1', 'retry-after-ms', '225'])).toBe('225ms');
    expect(retryAfterOf(['retry-after-ms', 'soon', 'Retry-After', '1'])).toBe('1');
    expect(retryMoment('225ms', 1000)).toBe(1225);
    const tracker = createClientTracker();
    tracker.gave('c', 'Wed, 21 Oct 2015 07:28:00 GMT', Date.UTC(2015, 9, 21));
    expect(tracker.arrive('c', Date.UTC(2015, 9, 21, 7, 27, 59, 360))).toBe('early retry: 640 ms before Retry-After');
    expect(tracker.arrive('c', Date.UTC(2015, 9, 21, 7, 28))).toBeUndefined();
  });
});

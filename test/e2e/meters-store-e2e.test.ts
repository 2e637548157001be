import { createClient } from '@redis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

/*
 * Meters through the shared store: four `mockapi serve` processes on one redis-server, many
 * concurrent clients, each request reserving a different amount and settling at another. Every
 * admission and settle is recorded inside the script that made it, with Redis's own time
 * (MOCKAPI_LIMIT_AUDIT), so the proof replays them afterwards: it does not depend on how fast this
 * machine could look at Redis while the load ran.
 */

const KEY = 'mk_meters_store_test';
const dir = useTempDir('mockapi-meters-store-');
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ tcp: true });
});
afterAll(() => redis?.stop());

/** One entry of the audit list: an admission (`a`) or a settle (`s`) of a meter, or a request-window admission (`r`). */
type AuditEntry =
  | { kind: 'a'; meter: string; at: number; amount: number }
  | { kind: 's'; meter: string; at: number; delta: number; time: number }
  | { kind: 'r'; at: number };

async function readAudit(key: string): Promise<AuditEntry[]> {
  const client = createClient({ url: redis.url });
  await client.connect();
  const raw = (await client.sendCommand(['LRANGE', key, '0', '-1'])) as string[];
  await client.close();
  return raw.map((line) => {
    const [kind, ...rest] = line.split('|');
    if (kind === 'r') return { kind, at: Number(rest[0]) };
    if (kind === 'a') return { kind, meter: rest[0]!, at: Number(rest[1]), amount: Number(rest[2]) };
    return { kind: 's', meter: rest[0]!, at: Number(rest[1]), delta: Number(rest[2]), time: Number(rest[3]) };
  });
}

/**
 * Replays the audit of `meter` in order (Redis ran the scripts one at a time): at each admission,
 * what the window `(at - windowMs, at]` held before it, plus its amount. Settles correct the amount
 * of their admission, as the store does.
 */
function fullestAdmission(
  audit: AuditEntry[],
  meter: string,
  windowMs: number,
): { admissions: number; fullest: number } {
  const amounts = new Map<number, number>();
  let fullest = 0;
  let admissions = 0;
  for (const entry of audit) {
    if (entry.kind === 'r' || entry.meter !== meter) continue;
    if (entry.kind === 's') {
      amounts.set(entry.at, (amounts.get(entry.at) ?? 0) + entry.delta);
      continue;
    }
    let held = 0;
    for (const [at, amount] of amounts) if (at > entry.at - windowMs && at <= entry.at) held += amount;
    fullest = Math.max(fullest, held + entry.amount);
    amounts.set(entry.at, (amounts.get(entry.at) ?? 0) + entry.amount);
    admissions++;
  }
  return { admissions, fullest };
}

describe('meters through the shared store, four mockapi serve processes', () => {
  it("no window ever admits more than the meter's limit, with reserves and settles racing across servers", async () => {
    const limit = 60;
    const windowMs = 1000;
    const config = await writeConfig(
      dir.path,
      [
        'project: meters-exact',
        `apiKey: ${KEY}`,
        'limits:',
        `  store: ${redis.url}`,
        '  meters:',
        `    tokens: { limit: ${limit}, window: ${windowMs}ms }`,
        '    spent: { limit: 100000000, window: total }',
        'endpoints:',
        '  - method: POST',
        '    path: /v1/work',
        '    cost:',
        '      tokens: { reserve: "${int(body.reserve)}", settle: "${int(body.used)}" }',
        '      spent: "${int(body.used)}"',
        '    response: { body: { ok: true } }',
      ].join('\n'),
    );
    const servers = await Promise.all(
      Array.from({ length: 4 }, () =>
        startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'], {
          env: { MOCKAPI_LIMIT_AUDIT: '1000000' },
        }),
      ),
    );
    const until = Date.now() + 4000;
    const statuses: number[] = [];
    let used = 0;
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const client = async (url: string) => {
      while (Date.now() < until) {
        const reserve = 1 + random(12);
        const settle = random(16);
        const res = await fetch(`${url}/v1/work`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ reserve, used: settle }),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
        if (res.status === 200) used += settle;
      }
    };
    await Promise.all(servers.flatMap((s) => Array.from({ length: 8 }, () => client(s.mock))));
    // Each settle is one more call after the answer: wait until every one is in the audit (the
    // condition, not a number of tries: a loaded machine may take seconds to send the last ones).
    const audit = await waitFor(
      async () => {
        const read = await readAudit('{mockapi:meters-exact}:audit');
        const settled = read.reduce((sum, e) => (e.kind === 's' && e.meter === 'spent' ? sum + e.delta : sum), 0);
        return settled === used * 1_000_000 ? read : undefined;
      },
      60_000,
      50,
    );
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const { admissions, fullest } = fullestAdmission(audit, 'tokens', windowMs);
    // Every admission is in the audit, and none took a window over the limit…
    expect(admissions).toBe(admitted);
    expect(fullest).toBeLessThanOrEqual(limit * 1_000_000);
    // …while windows did fill up to it (the check can fail).
    expect(fullest).toBeGreaterThan((limit - 12) * 1_000_000);
    // The total holds what the requests settled at, exactly.
    const usage = (await fetch(`${servers[0]!.url}/__mockapi/usage`).then((r) => r.json())) as {
      meters: Record<string, { used: number }>;
    };
    expect(usage.meters.spent!.used).toBe(used);
  }, 150_000);

  it('two servers share the meters: a budget set through one is spent on the other; mockapi usage reads and resets them in the store; a session keeps its own', async () => {
    const config = await writeConfig(
      dir.path,
      [
        'project: meters-shared',
        `apiKey: ${KEY}`,
        'limits:',
        `  store: ${redis.url}`,
        '  meters:',
        '    tokens: { limit: 100, window: 1m }',
        '    spend: { limit: 1, window: month, exhausted: insufficientQuota }',
        'limitHeaders: openai',
        'endpoints:',
        '  - method: POST',
        '    path: /v1/work',
        '    cost:',
        '      tokens: { reserve: "${body.reserve}", settle: "${response.body.used}" }',
        '      spend: "${response.body.used / 100}"',
        '    response: { body: { used: "${body.used}" } }',
      ].join('\n'),
      'shared.yaml',
    );
    const [one, two] = await Promise.all(
      [0, 1].map(() => startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch'])),
    );
    const work = (url: string, reserve: number, used: number, session?: string) =>
      fetch(`${url}/v1/work`, {
        method: 'POST',
        headers: {
          'x-api-key': KEY,
          'content-type': 'application/json',
          ...(session === undefined ? {} : { 'x-mockapi-session': session }),
        },
        body: JSON.stringify({ reserve, used }),
      });
    const first = await work(one!.mock, 90, 90);
    expect(first.status).toBe(200);
    const full = await work(two!.mock, 20, 20);
    expect(full.status).toBe(429);
    expect(full.headers.get('x-ratelimit-remaining-tokens')).toBe('10');

    const set = await fetch(`${one!.url}/__mockapi/usage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ meter: 'spend', value: 1 }),
    });
    expect(set.status).toBe(200);
    const spent = await work(two!.mock, 1, 1);
    expect(spent.status).toBe(429);
    expect(((await spent.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    // A named session's meters are its own, in the server's memory: its budget is whole.
    expect((await work(two!.mock, 5, 5, 'own')).status).toBe(200);

    const shown = await runCli(['usage', '-c', config], { cwd: dir.path });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('meter tokens: 90 / 100 per 1m, 10 remaining');
    expect(shown.stdout).toMatch(/meter spend: 1 \/ 1 in \d{4}-\d\d, 0 remaining; spent/);
    const reset = await runCli(['usage', '-c', config, '--reset', '--json'], { cwd: dir.path });
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout).meters.default.spend).toMatchObject({ used: 0, remaining: 1 });
    expect((await work(two!.mock, 1, 1)).status).toBe(200);
    await one!.stop();
    await two!.stop();
  }, 60_000);

  it('a month or total with room left, but less than a request asks, is not spent — the same answers through the store as in one process', async () => {
    const lines = (store: boolean) =>
      [
        `project: meters-room-${store ? 'store' : 'memory'}`,
        `apiKey: ${KEY}`,
        'limits:',
        ...(store ? [`  store: ${redis.url}`] : []),
        '  meters:',
        '    budget: { limit: 10, window: month }',
        '    points: { limit: 10, window: total }',
        'endpoints:',
        '  - method: POST',
        '    path: /v1/work',
        '    cost:',
        '      budget: { reserve: "${body.budget}" }',
        '      points: { reserve: "${body.points}" }',
        '    response: { body: { ok: true } }',
      ].join('\n');
    const seen: unknown[] = [];
    for (const store of [false, true]) {
      const config = await writeConfig(dir.path, lines(store), `room-${store}.yaml`);
      const server = await startServe(['-c', config, '--no-state', '--log', 'off', '--no-watch']);
      const work = async (budget: number, points: number) => {
        const res = await fetch(`${server.mock}/v1/work`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ budget, points }),
        });
        const body = (await res.json()) as { message?: string };
        return { status: res.status, retryAfter: res.headers.get('retry-after') !== null, message: body.message };
      };
      const answers = [await work(1, 1), await work(9.5, 0), await work(0, 9.5), await work(9, 9)];
      expect(answers.map((a) => a.status)).toEqual([200, 429, 429, 200]);
      expect(answers[1]!.message).toBe('Rate limit exceeded');
      expect(answers[1]!.retryAfter).toBe(true); // until the month resets
      expect(answers[2]!.message).toBe(
        'Request too large on points in total: Limit 10, Used 1, Requested 9.5. It can never fit: reduce what the request asks for.',
      );
      // Spent now: whatever is asked.
      expect(await work(0.5, 0)).toEqual({ status: 429, retryAfter: true, message: undefined }); // the quota's body: no message
      const journal = (await (await fetch(`${server.url}/__mockapi/requests`)).json()) as {
        requests: Array<{ notes?: string[] }>;
      };
      seen.push(journal.requests.map((r) => (r.notes ?? []).map((n) => n.replace(/\d+ ms before/, 'N ms before'))));
      expect(JSON.stringify(journal)).not.toContain('futile retry');
      await server.stop();
    }
    expect(seen[1]).toEqual(seen[0]);
  }, 60_000);
});

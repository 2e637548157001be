// SPEC §12, "workers scale like node:cluster": a burst of requests through `serve --workers 2`
// leaves nothing queued behind it — the first answer after the burst comes at once (bound: 2 s,
// generous), and the primary, which requests do not reach, stays small (bound: 300 MB RSS).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { burst, call, workerUrls } from '../helpers/workers.js';

const KEY = 'mk_workers_burst_key_0123456789ab';
const BURST_S = 4;
const dir = useTempDir('mockapi-workers-burst-');

const CONFIG = `project: workers-burst
apiKey: ${KEY}
server:
  journal: 100000
endpoints:
  - method: GET
    path: /a
    response:
      body: { ok: true, items: [1, 2, 3] }
`;

let serve: ServeProcess;
let own: string[];
let file: string;

beforeAll(async () => {
  file = await writeConfig(dir.path, CONFIG);
  serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off'], { cwd: dir.path });
  own = await waitFor(async () => {
    const urls = await workerUrls(dir.path);
    return urls.length === 2 ? urls : undefined;
  });
});
afterAll(() => serve?.stop('SIGTERM'));

/** The primary's resident memory in MB (Linux's /proc; undefined elsewhere). */
function primaryRssMb(): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${serve.child.pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

describe('serve --workers: a burst leaves nothing queued (SPEC §12)', () => {
  it(
    'answers at once after a burst, on the shared port and on each worker, and the primary stays small',
    { timeout: 60_000 },
    async () => {
      // `mockapi requests --follow` on one worker, following before the burst: it prints every request, whichever worker answered.
      const follower = spawn(process.execPath, [BIN, 'requests', '-c', file, '--follow', '--json'], {
        cwd: dir.path,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let followed = '';
      follower.stdout.setEncoding('utf8').on('data', (d: string) => (followed += d));
      const followedIds = () =>
        new Set(
          followed
            .split('\n')
            .filter(Boolean)
            .map((line) => (JSON.parse(line) as { id: number }).id),
        );
      expect((await call(serve.url, 'GET', '/mock/a?before=1', { headers: { 'x-api-key': KEY } })).status).toBe(200);
      await waitFor(() => (followedIds().size === 1 ? true : undefined));

      let peakRss = primaryRssMb() ?? 0;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, primaryRssMb() ?? 0)), 100);
      try {
        // Meanwhile a client polls the journal with `since` = the last id it got, on the shared port.
        let bursting = true;
        const polled: number[] = [];
        const poller = (async () => {
          for (let since = 0; bursting;) {
            const { status, body } = await call(serve.url, 'GET', `/__mockapi/requests?path=/mock/a&since=${since}`);
            expect(status).toBe(200);
            const ids = (body.requests as { id: number }[]).map((entry) => entry.id);
            expect(ids.every((id, i) => id > (i === 0 ? since : ids[i - 1]!))).toBe(true);
            polled.push(...ids);
            since = ids.at(-1) ?? since;
          }
        })();
        const statuses = await burst(
          `${serve.url}/mock/a`,
          { 'x-api-key': KEY },
          { connections: 64, durationMs: BURST_S * 1000, atLeast: 1000 },
        );
        bursting = false;
        await poller;

        // Right after the burst, a new connection to each worker's own port and to the shared port.
        for (const url of [serve.url, ...own]) {
          const started = performance.now();
          const answer = await call(url, 'GET', '/mock/a', { headers: { 'x-api-key': KEY } });
          const ms = performance.now() - started;
          expect(answer.status).toBe(200);
          expect(ms, `first answer from ${url} after a burst of ${statuses.get(200)} requests`).toBeLessThan(2000);
        }
        expect([...statuses.keys()]).toEqual([200]);
        expect(statuses.get(200)).toBeGreaterThan(500);
        // The journal answers too, with every request of the burst in it, and the poller missed none
        // of those it saw answered: ids grow in the order the answers were given, whichever worker gave them.
        const started = performance.now();
        const { status, body } = await call(serve.url, 'GET', '/__mockapi/requests?path=/mock/a');
        expect(performance.now() - started).toBeLessThan(2000);
        expect(status).toBe(200);
        const journal = (body.requests as { id: number }[]).map((entry) => entry.id);
        expect(journal).toHaveLength((statuses.get(200) ?? 0) + own.length + 2);
        expect(journal.slice(0, polled.length)).toEqual(polled);
        await waitFor(() => (followedIds().size >= journal.length ? true : undefined), 10_000).catch(() => undefined);
        expect([...followedIds()].sort((a, b) => a - b)).toEqual(journal);
      } finally {
        clearInterval(sampler);
        follower.kill();
      }
      if (process.platform === 'linux')
        expect(peakRss, 'primary RSS (MB) during and after the burst').toBeLessThan(300);
    },
  );
});

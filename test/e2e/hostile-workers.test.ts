// `serve --workers`: a worker killed with SIGKILL while connections are handed to it leaves no
// client hanging. node:cluster's round-robin primary sends each accepted connection to a worker
// and keeps its own copy open until the worker acknowledges it; a worker that dies first never
// does, and the connection stayed open in the primary for ever. Many rounds of kills under a flood
// of new connections make the race show: every request must settle (answered, or refused at once).
import { readdir } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';

const KEY = 'mk_hostileWorkers00000000000000001';
const dir = useTempDir('mockapi-hostile-workers-');

/** One request on a connection of its own; 'hung' when nothing settles it within `ms`. */
function once(url: string, ms: number): Promise<'ok' | 'error' | 'hung'> {
  return new Promise((done) => {
    const timer = setTimeout(() => {
      req.destroy();
      done('hung');
    }, ms);
    const settle = (v: 'ok' | 'error') => {
      clearTimeout(timer);
      done(v);
    };
    const req = request(url, { agent: new Agent({ keepAlive: false }), headers: { 'x-api-key': KEY } }, (res) => {
      res.resume();
      res.on('end', () => settle(res.statusCode === 200 ? 'ok' : 'error'));
      res.on('error', () => settle('error'));
    });
    req.on('error', () => settle('error'));
    req.end();
  });
}

describe('a worker killed while connections are handed to it', () => {
  test('no request hangs over 12 kills under a flood of new connections', async () => {
    const file = await writeConfig(
      dir.path,
      `apiKey: ${KEY}\nproject: hostile-workers\nendpoints:\n  - { method: GET, path: /a, response: { body: { ok: true } } }\n`,
    );
    const serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off']);
    const folder = join(dir.path, '.mockapi', 'servers');
    const alive = (pid: number): boolean => {
      try {
        return process.kill(pid, 0);
      } catch {
        return false;
      }
    };
    // The registry keeps a killed worker's entry (it could not remove it): only live ones count.
    const pids = async () =>
      (await readdir(folder)).map((name) => Number(name.split('-')[0])).filter((pid) => pid > 0 && alive(pid));
    const outcomes = { ok: 0, error: 0, hung: 0 };
    for (let round = 0; round < 12; round++) {
      const before = await waitFor(
        async () => {
          const list = await pids();
          return list.length === 2 ? list : undefined;
        },
        15_000,
        20,
      );
      let flooding = true;
      const flood = Array.from({ length: 16 }, async () => {
        while (flooding) outcomes[await once(`${serve.mock}/a`, 8_000)]++;
      });
      await new Promise((r) => setTimeout(r, 30)); // let the flood start: kills land among handoffs
      const victim = before[round % 2]!;
      process.kill(victim, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200)); // the flood goes on over the kill and the replacement's start
      flooding = false;
      await Promise.all(flood);
      await waitFor(
        async () => ((await pids()).filter((p) => p !== victim).length === 2 ? true : undefined),
        15_000,
        20,
      );
    }
    expect(serve.stderr()).toMatch(/worker \d+ exited \(SIGKILL\); starting another/);
    expect(outcomes.hung).toBe(0);
    expect(outcomes.ok).toBeGreaterThan(100);
    expect(serve.child.exitCode).toBeNull();
  }, 240_000);
});

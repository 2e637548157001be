// Issue 6: when usage state cannot be written (a full disk, a read-only place, a path through a
// regular file) `mockapi serve` says so once, not once a second, keeps serving, and never damages
// the state it already had. Black-box against the built CLI.
import { describe, expect, test } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { BIN, startServe, waitFor, writeConfig, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_diskKey0123456789abcdefghijklmno';
const CONFIG = `apiKey: ${KEY}
limits:
  monthlyQuota: 1000000
endpoints:
  - method: GET
    path: /ping
    response:
      body: pong
`;

const temp = useTempDir('mockapi-faults-disk-');

function thisMonth(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

const stateText = (requests: number) => `${JSON.stringify({ version: 1, usage: { month: thisMonth(), requests } })}\n`;
const stateWarnings = (stderr: string) => stderr.split('\n').filter((l) => l.includes('usage state'));

/**
 * Steady traffic: requests one after another, paced a few milliseconds apart so as not to hog a
 * small machine, until `until()` holds (at most `max` requests); returns the statuses.
 */
async function trafficUntil(url: string, until: () => boolean, max = 5_000): Promise<number[]> {
  const agent = new Agent({ connections: 1 });
  const statuses: number[] = [];
  try {
    for (let i = 0; i < max && !until(); i++) {
      const res = await request(`${url}/mock/ping`, { headers: { 'x-api-key': KEY }, dispatcher: agent });
      await res.body.dump();
      statuses.push(res.statusCode);
      await new Promise((paced) => setTimeout(paced, 2));
    }
  } finally {
    await agent.close();
  }
  return statuses;
}

/** `mockapi serve` under `ulimit -f 0`: every write to a file fails (EFBIG), as on a full disk. */
function startServeOnFullDisk(
  args: string[],
  cwd: string,
): Promise<{ child: ChildProcess; url: string; stderr(): string; stop(): Promise<number | null> }> {
  const child = spawn(
    'sh',
    ['-c', 'ulimit -f 0 && exec "$0" "$@"', process.execPath, BIN, 'serve', '--port', '0', ...args],
    {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return waitFor(
    () => /listening on (\S+)/.exec(out)?.[1] ?? (child.exitCode !== null ? Promise.reject(new Error(err)) : undefined),
    15_000,
  ).then((url) => ({
    child,
    url,
    stderr: () => err,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  }));
}

describe('usage state that cannot be written (SPEC §5.4)', () => {
  test('a full disk: one warning however many flushes fail, every request served, the old state left whole', async () => {
    const work = join(temp.path, 'full');
    await mkdir(join(work, '.mockapi'), { recursive: true });
    await writeConfig(work, CONFIG);
    await writeFile(join(work, '.mockapi', '.gitignore'), '*\n');
    await writeFile(join(work, '.mockapi', 'state.json'), stateText(5));

    const server = await startServeOnFullDisk(['--log', 'off', '--no-watch'], work);
    // Each failed flush creates (then removes) a temporary file: wait for three of them.
    let attempts = 0;
    const watcher = watch(join(work, '.mockapi'), (event, name) => {
      if (event === 'rename' && name?.startsWith('.state.json.mockapi-tmp-')) attempts++;
    });
    let statuses: number[];
    try {
      statuses = await trafficUntil(server.url, () => attempts >= 6); // create + unlink events, 3 flushes
    } finally {
      watcher.close();
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await server.stop()).toBe(0);

    const warnings = stateWarnings(server.stderr());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^mockapi warning: cannot write usage state .*state\.json \(EFBIG: file too large, write\); counting goes on in memory and the write is retried$/,
    );
    expect(await readFile(join(work, '.mockapi', 'state.json'), 'utf8')).toBe(stateText(5));
    expect((await readdir(join(work, '.mockapi'))).filter((n) => n.includes('.mockapi-tmp-'))).toEqual([]);

    // With space again, a restart continues from the state that was kept.
    const again = await startServe(['-c', join(work, 'mockapi.yaml'), '--log', 'off', '--no-watch']);
    await trafficUntil(again.url, () => false, 1);
    expect(await again.stop('SIGTERM')).toBe(0);
    expect(await readFile(join(work, '.mockapi', 'state.json'), 'utf8')).toBe(stateText(6));
    expect(stateWarnings(again.stderr())).toEqual([]);
  }, 60_000);

  test('a read-only place (/sys): one warning, however long the traffic goes on', async (ctx) => {
    const target = `/sys/mockapi-hardening-${process.pid}.json`;
    // Only where creating a file there fails, even for root.
    const probe = await open(`${target}.probe`, 'wx').then(
      async (handle) => {
        await handle.close();
        await unlink(`${target}.probe`);
        return true;
      },
      () => false,
    );
    if (probe) ctx.skip();
    const work = join(temp.path, 'readonly');
    await mkdir(work);
    const file = await writeConfig(work, CONFIG);
    const server = await startServe(['-c', file, '--log', 'off', '--no-watch', '--state', target]);
    await trafficUntil(server.url, () => stateWarnings(server.stderr()).length > 0);
    // Keep the traffic going over three more flush intervals (1 s each).
    const until = Date.now() + 3200;
    const statuses = await trafficUntil(server.url, () => Date.now() > until);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await server.stop('SIGTERM')).toBe(0);
    const warnings = stateWarnings(server.stderr());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^mockapi warning: cannot write usage state ${target} \\(EACCES: permission denied, open .*\\); counting goes on in memory and the write is retried$`,
      ),
    );
  }, 30_000);

  test('a --state path through a regular file: one warning at start, served from memory, the file untouched', async () => {
    const work = join(temp.path, 'notdir');
    await mkdir(work);
    const file = await writeConfig(work, CONFIG);
    await writeFile(join(work, 'plain-file'), 'not a folder\n');
    const target = join(work, 'plain-file', 'state.json');
    const server = await startServe(['-c', file, '--log', 'off', '--no-watch', '--state', target]);
    const until = Date.now() + 1500; // past the first flush interval
    const statuses = await trafficUntil(server.url, () => Date.now() > until);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(stateWarnings(server.stderr())).toEqual([
      `mockapi warning: cannot read usage state ${target} (ENOTDIR: not a directory, open '${target}'); usage is kept in memory only and the file is left as it is`,
    ]);
    expect(await readFile(join(work, 'plain-file'), 'utf8')).toBe('not a folder\n');
  });

  test('an empty .mockapi/.gitignore (left by a write cut short) is written again', async () => {
    const work = join(temp.path, 'gitignore');
    await mkdir(join(work, '.mockapi'), { recursive: true });
    const file = await writeConfig(work, CONFIG);
    await writeFile(join(work, '.mockapi', '.gitignore'), '');
    const server = await startServe(['-c', file, '--log', 'off', '--no-watch']);
    await trafficUntil(server.url, () => false, 1);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect((await readFile(join(work, '.mockapi', '.gitignore'), 'utf8')).split('\n')).toContain('*');
    await rm(join(work, '.mockapi'), { recursive: true });
  });
});

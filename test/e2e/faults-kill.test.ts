// Issue 6: `kill -9` never leaves a broken file. The built CLI is SIGKILLed at varied moments —
// while `serve` flushes usage state under steady traffic, and while `rotate-key` rewrites the
// config a watching server serves — and after every kill the files must parse, whole.
import { describe, expect, test } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import { BIN, startServe, waitFor, type ServeProcess, useTempDir } from '../helpers/cli.js';

const KEY = 'mk_faultsKey0123456789abcdefghijklm';
const STATE_ROUNDS = 6;
const ROTATE_ROUNDS = 6;
/**
 * A kill "as the temporary file appears" usually lands mid-write (fsync takes a while); on a very
 * fast file system it may land after the rename. Extra rounds of that kind, up to this many,
 * run until one did hit a write in progress.
 */
const EXTRA_ROUNDS = 9;

const temp = useTempDir('mockapi-faults-kill-');

function config(key: string): string {
  return `# kill -9 test
project: faults
apiKey: ${key}   # rotated below
limits:
  monthlyQuota: 1000000
endpoints:
  - method: GET
    path: /ping
    response:
      body: pong
`;
}

function thisMonth(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The state file's count, after checking it has exactly the SPEC §5.4 shape. */
function strictState(text: string): number {
  const data = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(data)).toEqual(['version', 'usage']);
  expect(data.version).toBe(1);
  const usage = data.usage as Record<string, unknown>;
  expect(Object.keys(usage)).toEqual(['month', 'requests']);
  expect(usage.month).toBe(thisMonth());
  expect(Number.isSafeInteger(usage.requests) && (usage.requests as number) >= 0).toBe(true);
  return usage.requests as number;
}

/** Sends requests one after another until the server goes away; resolves to how many got a 200. */
function steadyTraffic(server: ServeProcess): { admitted(): number; done: Promise<void> } {
  const agent = new Agent({ connections: 1 });
  let ok = 0;
  const done = (async () => {
    for (let i = 0; i < 100_000 && server.child.exitCode === null && server.child.signalCode === null; i++) {
      try {
        const res = await request(`${server.mock}/ping`, { headers: { 'x-api-key': KEY }, dispatcher: agent });
        await res.body.dump();
        if (res.statusCode === 200) ok++;
      } catch {
        break; // killed
      }
    }
    await agent.destroy();
  })();
  return { admitted: () => ok, done };
}

/** Calls `onHit` (once) when a file event in `folder` names a file matching `pattern`. */
function onFileEvent(folder: string, pattern: RegExp, onHit: () => void): FSWatcher {
  let fired = false;
  const watcher = watch(folder, (_event, name) => {
    if (!fired && name !== null && pattern.test(name)) {
      fired = true;
      onHit();
    }
  });
  watcher.on('error', () => {});
  return watcher;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) =>
    child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done()),
  );
}

describe('kill -9 during usage-state flushes (SPEC §5.4)', () => {
  test(`the state file always parses with the §5.4 shape, never goes back, and a restart continues from it (${STATE_ROUNDS} kills)`, async () => {
    const work = join(temp.path, 'state');
    await mkdir(work);
    const file = await writeConfigIn(work, config(KEY));
    const stateFile = join(work, '.mockapi', 'state.json');
    let persisted = 0;
    let admittedTotal = 0;
    const moments: string[] = [];
    let midWrite = 0; // kills that left a temporary file: they hit a write in progress

    for (let round = 0; round < STATE_ROUNDS || (midWrite === 0 && round < STATE_ROUNDS + EXTRA_ROUNDS); round++) {
      const server = await startServe(['-c', file, '--log', 'off', '--no-watch']);
      const traffic = steadyTraffic(server);
      const kill = () => server.child.kill('SIGKILL');
      // Vary the moment: as a temporary state file appears, as the rename lands, or some way
      // into the second between two flushes. The first round waits for a first flush.
      const how =
        round === 0
          ? 'between flushes'
          : round >= STATE_ROUNDS
            ? 'as the temporary file appears'
            : (['as the temporary file appears', 'as the rename lands', 'between flushes'] as const)[round % 3]!;
      moments.push(how);
      let watcher: FSWatcher | undefined;
      if (how === 'as the temporary file appears')
        watcher = onFileEvent(join(work, '.mockapi'), /^\.state\.json\.mockapi-tmp-/, kill);
      if (how === 'as the rename lands') watcher = onFileEvent(join(work, '.mockapi'), /^state\.json$/, kill);
      if (how === 'between flushes') {
        await waitFor(async () => {
          const count = countIn(await readFile(stateFile, 'utf8').catch(() => ''));
          return count !== undefined && count !== persisted;
        }, 10_000);
        setTimeout(kill, (round * 137) % 900);
      }
      const killer = setTimeout(kill, 8000); // bounded, should a file event never come
      await exited(server.child);
      clearTimeout(killer);
      watcher?.close();
      await traffic.done;
      expect(server.child.signalCode).toBe('SIGKILL');
      admittedTotal += traffic.admitted();

      if ((await readdir(join(work, '.mockapi'))).some((n) => n.includes('.mockapi-tmp-'))) midWrite++;
      const count = strictState(await readFile(stateFile, 'utf8'));
      expect(count).toBeGreaterThanOrEqual(persisted); // a restart continued from the file
      // (a response can be lost with the process after its request was counted)
      expect(count).toBeLessThanOrEqual(admittedTotal + round + 1);
      persisted = count;
    }
    expect(moments).toContain('as the temporary file appears');
    expect(midWrite).toBeGreaterThan(0);

    // A clean restart removes what the killed writers left, continues from the file, and its
    // shutdown flush writes exactly one more.
    const server = await startServe(['-c', file, '--log', 'off', '--no-watch']);
    expect((await readdir(join(work, '.mockapi'))).filter((n) => n.includes('.mockapi-tmp-'))).toEqual([]);
    const res = await request(`${server.mock}/ping`, { headers: { 'x-api-key': KEY } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(strictState(await readFile(stateFile, 'utf8'))).toBe(persisted + 1);
    expect(server.stderr()).not.toMatch(/corrupt|cannot/);
  }, 90_000);
});

describe('kill -9 during rotate-key with a watching server (SPEC §5.5)', () => {
  test(`the config is always one whole version with its mode, and the server serves exactly the file's key (${ROTATE_ROUNDS} kills)`, async () => {
    const work = join(temp.path, 'rotate');
    await mkdir(work);
    const file = await writeConfigIn(work, config(KEY));
    await chmod(file, 0o640);
    const server = await startServe(['-c', file, '--log', 'off', '--no-state']);
    let text = await readFile(file, 'utf8');
    let key = KEY;
    const keys = [KEY];
    let midWrite = 0; // kills that left a temporary file: they hit a write in progress

    for (let round = 0, last = false; !last; round++) {
      last = round >= ROTATE_ROUNDS && (midWrite > 0 || round >= ROTATE_ROUNDS + EXTRA_ROUNDS); // the last run is not killed
      const kind = round >= ROTATE_ROUNDS ? 0 : round % 3;
      const child = spawn(process.execPath, [BIN, 'rotate-key', '-c', file], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      let stdout = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', () => {});
      const kill = () => child.kill('SIGKILL');
      let watcher: FSWatcher | undefined;
      // Vary the moment: as the temporary file appears (while writing), as the rename lands, or a
      // few milliseconds later (while waiting for the server to confirm).
      if (!last && kind === 0) watcher = onFileEvent(work, /^\.mockapi\.yaml\.mockapi-tmp-/, kill);
      if (!last && kind === 1) watcher = onFileEvent(work, /^mockapi\.yaml$/, kill);
      if (!last && kind === 2) watcher = onFileEvent(work, /^mockapi\.yaml$/, () => setTimeout(kill, round * 3));
      const timer = last ? undefined : setTimeout(kill, 8000); // bounded, should a file event never come
      await exited(child);
      clearTimeout(timer);
      watcher?.close();

      if (!last) expect(child.signalCode).toBe('SIGKILL');
      if ((await readdir(work)).some((n) => n.includes('.mockapi-tmp-'))) midWrite++;
      const now = await readFile(file, 'utf8');
      const parsed = await parseConfig(Buffer.from(now), file);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      const nowKey = parsed.config.apiKey;
      expect(now).toBe(text.replace(key, nowKey)); // one whole version: only the key differs
      expect(nowKey === key || /^mk_[0-9A-Za-z]{32}$/.test(nowKey)).toBe(true);
      expect((await stat(file)).mode & 0o777).toBe(0o640);
      if (last) {
        expect(child.exitCode).toBe(0);
        expect(stdout.trim()).toBe(nowKey);
      }

      // The watching server converges on the file as it is, whatever moment the kill hit.
      const revision = createHash('sha256').update(now).digest('hex');
      await waitFor(async () => {
        const health = await request(`${server.url}/__mockapi/health`);
        return ((await health.body.json()) as { revision: string }).revision === revision;
      }, 10_000);
      expect(await statusWith(server, nowKey)).toBe(200);
      if (nowKey !== key) expect(await statusWith(server, key)).toBe(401);
      if (nowKey !== key) keys.push(nowKey);
      text = now;
      key = nowKey;
    }
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(midWrite).toBeGreaterThan(0);
    for (const old of keys.slice(0, -1)) expect(await statusWith(server, old)).toBe(401);
    // the completed run cleaned up what the killed ones left
    expect((await readdir(work)).filter((n) => n.includes('.mockapi-tmp-'))).toEqual([]);
    expect(server.child.exitCode).toBeNull();
    expect(await server.stop('SIGTERM')).toBe(0);
  }, 90_000);
});

async function statusWith(server: ServeProcess, key: string): Promise<number> {
  const res = await request(`${server.mock}/ping`, { headers: { 'x-api-key': key } });
  await res.body.dump();
  return res.statusCode;
}

function countIn(text: string): number | undefined {
  try {
    const data = JSON.parse(text) as { usage?: { requests?: number } };
    return data.usage?.requests;
  } catch {
    return undefined;
  }
}

async function writeConfigIn(folder: string, yaml: string): Promise<string> {
  const file = join(folder, 'mockapi.yaml');
  await writeFile(file, yaml);
  return file;
}

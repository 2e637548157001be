import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { chmod, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRotateKey, type RotateKeyDeps } from '../../src/cli/commands/rotate-key.js';
import { registerServer } from '../../src/state/registry.js';
import { watchConfig } from '../../src/watch/watch.js';

const OLD_KEY = 'mk_OLDkey0000000000000000000000000';
const CONFIG = [
  '# mockapi.yaml — committed alongside the app',
  'project: shop-api',
  `apiKey: ${OLD_KEY}   # rotate with mockapi rotate-key`,
  '',
  'limits:',
  '  monthlyQuota: 10000  # per month',
  'endpoints:',
  '  - method: GET',
  '    path: /users/:id',
  '    response:',
  '      body: { id: 42 }',
  '',
].join('\n');

let dir: string;
let file: string;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-rotate-'));
  file = join(dir, 'mockapi.yaml');
  await writeFile(file, CONFIG);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

async function rotate(opts: { key?: string } = {}, deps?: RotateKeyDeps) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runRotateKey(
    { config: file, ...opts },
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    deps,
  );
  return { code, out, err };
}

/** A tiny stand-in for `mockapi serve`: answers /__mockapi/health with `revision()` and registers itself. */
async function fakeServer(
  revision: () => string,
  opts: { watch?: boolean } = {},
): Promise<{ url: string; pid: number }> {
  const server: Server = createServer((req, res) => {
    if (req.url !== '/__mockapi/health') return void res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'ok', revision: revision(), endpoints: 1 }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const unregister = await registerServer(file, { url, watch: opts.watch });
  cleanups.push(() => new Promise((done) => server.close(done)), unregister);
  return { url, pid: process.pid };
}

/** A fake server that reloads like the real one: watchConfig, re-read, sha256. */
async function watchingServer(): Promise<{ url: string; revision: () => string }> {
  let served = sha256(await readFile(file));
  const watcher = watchConfig({
    file,
    onChange: () => {
      readFile(file).then(
        (bytes) => (served = sha256(bytes)),
        () => {},
      );
    },
  });
  cleanups.push(() => watcher.close());
  await watcher.ready;
  const { url } = await fakeServer(() => served);
  return { url, revision: () => served };
}

describe('rotate-key', () => {
  it('changes only the key bytes, prints only the key on stdout, keeps the mode', async () => {
    await chmod(file, 0o600);
    const before = await readFile(file);
    const { code, out, err } = await rotate();
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    const key = out[0] as string;
    expect(key).toMatch(/^mk_[0-9A-Za-z]{32}$/);
    const after = await readFile(file);
    expect(after.toString()).toBe(before.toString().replace(OLD_KEY, key));
    // byte diff: a common prefix and suffix around exactly the old and new key
    const at = before.indexOf(OLD_KEY);
    expect(after.subarray(0, at).equals(before.subarray(0, at))).toBe(true);
    expect(after.subarray(at, at + key.length).toString()).toBe(key);
    expect(after.subarray(at + key.length).equals(before.subarray(at + OLD_KEY.length))).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(err).toEqual([`rotated apiKey in ${file}; no running servers`]);
    expect((await readdir(dir)).filter((n) => n.includes('mockapi-tmp'))).toEqual([]);
  });

  it('keeps CRLF line endings and a BOM', async () => {
    const crlf = `\uFEFF${CONFIG.replaceAll('\n', '\r\n')}`;
    await writeFile(file, crlf);
    const { code, out } = await rotate({ key: 'mk_given' });
    expect(code).toBe(0);
    expect(out).toEqual(['mk_given']);
    expect(await readFile(file, 'utf8')).toBe(crlf.replace(OLD_KEY, 'mk_given'));
  });

  it('sets a key given with --key', async () => {
    const { code, out } = await rotate({ key: 'mk_chosenByMe' });
    expect(code).toBe(0);
    expect(out).toEqual(['mk_chosenByMe']);
    expect(await readFile(file, 'utf8')).toBe(CONFIG.replace(OLD_KEY, 'mk_chosenByMe'));
  });

  it.each([
    ['empty', '', /--key must be/],
    ['with a space', 'mk_a b', /--key must be/],
    ['with a colon', 'mk_a:b', /--key must be/],
    ['not ASCII (the schema refuses it)', 'mk_clé', /apiKey/],
  ])('refuses a --key that is %s and leaves the file alone', async (_name, key, message) => {
    const before = await stat(file);
    const { code, out, err } = await rotate({ key });
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err.join('\n')).toMatch(message);
    expect(await readFile(file, 'utf8')).toBe(CONFIG);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
  });

  it('treats --key equal to the current key as done: exit 0, file untouched', async () => {
    const before = await stat(file);
    const { code, out, err } = await rotate({ key: OLD_KEY });
    expect(code).toBe(0);
    expect(out).toEqual([OLD_KEY]);
    expect(err).toEqual([`apiKey in ${file} already has this value; file left unchanged`]);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
  });

  it('refuses an invalid config, printing its issues, and leaves bytes and mtime as they were', async () => {
    const invalid = CONFIG.replace('monthlyQuota: 10000', 'monthlyQuota: -1');
    await writeFile(file, invalid);
    const past = new Date('2020-01-02T03:04:05Z');
    await utimes(file, past, past);
    const { code, out, err } = await rotate();
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:\\d+: .*monthlyQuota`));
    expect(err.at(-1)).toBe(`${file} is not a valid config; the key was not rotated`);
    expect(await readFile(file, 'utf8')).toBe(invalid);
    expect((await stat(file)).mtime.getTime()).toBe(past.getTime());
  });

  it('refuses a key it cannot replace safely (anchored value), file untouched', async () => {
    const anchored = CONFIG.replace(`apiKey: ${OLD_KEY}`, `apiKey: &key ${OLD_KEY}`);
    await writeFile(file, anchored);
    const { code, out, err } = await rotate();
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      `cannot rotate the key in ${file}: the apiKey value carries an anchor or a tag; edit it by hand`,
    ]);
    expect(await readFile(file, 'utf8')).toBe(anchored);
  });

  it('fails with exit 1 for a missing file', async () => {
    await rm(file);
    const { code, out, err } = await rotate();
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err.join('\n')).toMatch(/not found|no such file/);
  });

  it('removes temporary files a killed earlier run left behind', async () => {
    const leftover = join(dir, '.mockapi.yaml.mockapi-tmp-999999999-abcdef01');
    await writeFile(leftover, 'apiKey: half');
    expect((await rotate()).code).toBe(0);
    expect(await readdir(dir)).not.toContain('.mockapi.yaml.mockapi-tmp-999999999-abcdef01');
  });
});

describe('rotate-key with running servers', () => {
  it('waits until every watching server serves the new revision', async () => {
    const a = await watchingServer();
    const b = await watchingServer();
    const { code, out, err } = await rotate();
    expect(code).toBe(0);
    const newRevision = sha256(await readFile(file));
    // Taken effect when it returns: both already serve the new bytes.
    expect(a.revision()).toBe(newRevision);
    expect(b.revision()).toBe(newRevision);
    expect(out).toHaveLength(1);
    expect(err).toEqual([`rotated apiKey in ${file}; 2 running servers confirmed`]);
  });

  it('names a server that keeps the old revision, after the timeout, and still exits 0', async () => {
    const oldRevision = sha256(CONFIG);
    const good = await watchingServer();
    const stuck = await fakeServer(() => oldRevision);
    const started = Date.now();
    // Long enough for the good server's watcher to reload on a loaded machine: it must confirm in time.
    const { code, out, err } = await rotate({}, { timeoutMs: 2000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1990);
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    expect(await readFile(file, 'utf8')).toContain(out[0]);
    expect(good.revision()).toBe(sha256(await readFile(file)));
    expect(err).toEqual([
      `rotated apiKey in ${file}; 1 of 2 running servers confirmed`,
      `warning: server ${stuck.url} (pid ${stuck.pid}) did not confirm the new key within 2s (it still serves an older revision; is the file valid for it?); it may still accept the old key`,
    ]);
  });

  it('names a registered server that does not answer', async () => {
    const { url } = await fakeServer(() => 'x');
    // Close the listener but keep the registration: the process (this one) is alive, the port is not.
    await cleanups.shift()?.();
    const { code, err } = await rotate({}, { timeoutMs: 150 });
    expect(code).toBe(0);
    expect(err[1]).toBe(
      `warning: server ${url} (pid ${process.pid}) did not confirm the new key within 0.15s (it did not answer its health check); it may still accept the old key`,
    );
  });

  it('warns at once about a --no-watch server instead of waiting for it', async () => {
    const { url } = await fakeServer(() => sha256(CONFIG), { watch: false });
    // Waiting for it would outlast the test's own time limit; no clock reading to race with a loaded machine.
    const { code, err } = await rotate({}, { timeoutMs: 120_000 });
    expect(code).toBe(0);
    expect(err).toEqual([
      `rotated apiKey in ${file}; 0 of 1 running server confirmed`,
      `warning: server ${url} (pid ${process.pid}) runs with --no-watch and accepts the old key until it is restarted`,
    ]);
  });

  it('uses an injected fetchRevision (polling until it matches)', async () => {
    await fakeServer(() => 'unused');
    let calls = 0;
    const fetchRevision = async (): Promise<string | undefined> => {
      calls++;
      return calls < 4 ? 'old' : sha256(await readFile(file));
    };
    const { code, err } = await rotate({}, { fetchRevision, pollIntervalMs: 1 });
    expect(code).toBe(0);
    expect(calls).toBe(4);
    expect(err).toEqual([`rotated apiKey in ${file}; 1 running server confirmed`]);
  });
});

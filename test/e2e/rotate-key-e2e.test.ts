// End to end: hot reload and rotate-key against real servers — in-process (startMockServer from
// the sources) and black-box (the built CLI, as `npm test` builds it first).
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runRotateKey } from '../../src/cli/commands/rotate-key.js';
import { startMockServer, type MockServer } from '../../src/index.js';
import { BIN, removeDir, runCli, startServe, stopAll, tempDir, waitFor, writeConfig } from '../helpers/cli.js';

const OLD_KEY = 'mk_e2eOldKey0123456789abcdefghijkl';
const CONFIG = `# e2e config — comments must survive rotation
project: e2e
apiKey: ${OLD_KEY}  # the key
endpoints:
  - method: GET
    path: /ping
    response:
      body: { pong: true }
`;

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

async function status(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/mock/ping`, { headers: { 'x-api-key': key } });
  await res.body?.cancel();
  return res.status;
}

async function healthRevision(base: string): Promise<string> {
  const res = await fetch(`${base}/__mockapi/health`);
  return ((await res.json()) as { revision: string }).revision;
}

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await tempDir('mockapi-e2e-rotate-');
  file = await writeConfig(dir, CONFIG);
});

afterEach(async () => {
  await stopAll();
  await removeDir(dir);
});

describe('in-process servers (startMockServer with watch)', () => {
  const servers: MockServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  test('the old key is refused by every server the moment rotate-key returns', async () => {
    servers.push(await startMockServer({ config: file, port: 0, watch: true }));
    servers.push(await startMockServer({ config: file, port: 0, watch: true }));
    for (const s of servers) expect(await status(s.url, OLD_KEY)).toBe(200);

    const out: string[] = [];
    const err: string[] = [];
    const code = await runRotateKey({ config: file }, { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code).toBe(0);
    const newKey = out[0] as string;
    expect(err).toEqual([`rotated apiKey in ${file}; 2 running servers confirmed`]);
    for (const s of servers) {
      expect(await status(s.url, OLD_KEY)).toBe(401);
      expect(await status(s.url, newKey)).toBe(200);
      expect(await healthRevision(s.url)).toBe(sha256(await readFile(file)));
    }
  });

  test('an invalid edit keeps the last good config; an atomic editor save is picked up', async () => {
    const warnings: string[] = [];
    const infos: string[] = [];
    const logger = {
      info: (m: string) => infos.push(m),
      warn: (m: string) => warnings.push(m),
      error: (m: string) => warnings.push(m),
    };
    const server = await startMockServer({ config: file, port: 0, watch: true, logger });
    servers.push(server);
    const goodRevision = await healthRevision(server.url);

    await writeFile(file, CONFIG.replace('path: /ping', 'path: no-slash'));
    await waitFor(() =>
      warnings.some((w) => w.includes('still serving the last good one') && w.includes('mockapi.yaml:')),
    );
    expect(await healthRevision(server.url)).toBe(goodRevision);
    expect(await status(server.url, OLD_KEY)).toBe(200);

    const tmp = join(dir, '.mockapi.yaml.editor-save');
    const next = CONFIG.replace(OLD_KEY, 'mk_savedByEditor');
    await writeFile(tmp, next);
    await rename(tmp, file);
    await waitFor(async () => (await healthRevision(server.url)) === sha256(next));
    expect(await status(server.url, 'mk_savedByEditor')).toBe(200);
    expect(await status(server.url, OLD_KEY)).toBe(401);
    expect(infos).toContain('reloaded mockapi.yaml: no endpoint changes; apiKey changed');
    expect(infos.join('\n')).not.toContain('mk_savedByEditor');
  });

  test('unregisters on close', async () => {
    const server = await startMockServer({ config: file, port: 0, watch: true });
    const entries = await readdir(join(dir, '.mockapi', 'servers'));
    expect(entries).toEqual([`${process.pid}-${server.port}.json`]);
    await server.close();
    expect(await readdir(join(dir, '.mockapi', 'servers'))).toEqual([]);
  });
});

// npm test builds first; a missing build must fail these tests, not skip them.
describe('the built CLI', () => {
  afterAll(stopAll);

  test('KEY=$(mockapi rotate-key) with two serve processes: confirmed, old key refused at once, file diff is the key', async () => {
    const a = await startServe(['-c', file]);
    const b = await startServe(['-c', file]);
    const result = await runCli(['rotate-key', '-c', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^mk_[0-9A-Za-z]{32}\n$/);
    const key = result.stdout.trim();
    expect(result.stderr.trim()).toBe(`rotated apiKey in ${file}; 2 running servers confirmed`);
    expect(await readFile(file, 'utf8')).toBe(CONFIG.replace(OLD_KEY, key));
    for (const s of [a, b]) {
      expect(await status(s.url, OLD_KEY)).toBe(401);
      expect(await status(s.url, key)).toBe(200);
    }
    await Promise.all([a.stop(), b.stop()]);
    expect(await readdir(join(dir, '.mockapi', 'servers'))).toEqual([]);
  });

  test('a SIGKILLed server is not waited for: its entry is dropped', async () => {
    const s = await startServe(['-c', file]);
    expect(await s.stop('SIGKILL')).toBe(null);
    const result = await runCli(['rotate-key', '-c', file, '--key', 'mk_afterCrash']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('mk_afterCrash\n');
    expect(result.stderr.trim()).toBe(`rotated apiKey in ${file}; no running servers`);
    expect(await readdir(join(dir, '.mockapi', 'servers'))).toEqual([]);
  });

  test('serve reports an invalid edit, keeps serving, and rotate-key refuses the invalid file', async () => {
    const s = await startServe(['-c', file]);
    const broken = CONFIG.replace('path: /ping', 'path: no-slash');
    await writeFile(file, broken);
    await s.waitForOutput(/path/);
    expect(await status(s.url, OLD_KEY)).toBe(200);
    const result = await runCli(['rotate-key', '-c', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/mockapi\.yaml:\d+:\d+: .*path/);
    expect(await readFile(file, 'utf8')).toBe(broken);
  });
});

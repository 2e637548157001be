import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listServers, registerServer, unregisterSync } from '../../src/state/registry.js';

let dir: string;
let config: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-registry-'));
  config = join(dir, 'mockapi.yaml');
  await writeFile(config, 'apiKey: mk_x\n');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited (and been reaped), so it is certainly not alive. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid as number;
  await new Promise((done) => child.once('exit', done));
  return pid;
}

describe('registry', () => {
  it('writes .mockapi/servers/<pid>-<port>.json with a .gitignore, and removes it on unregister', async () => {
    const unregister = await registerServer(config, { url: 'http://127.0.0.1:4321' });
    const path = join(dir, '.mockapi', 'servers', `${process.pid}-4321.json`);
    expect(unregister.path).toBe(path);
    const entry = JSON.parse(await readFile(path, 'utf8'));
    expect(entry).toEqual({
      pid: process.pid,
      url: 'http://127.0.0.1:4321',
      configFile: config,
      startedAt: expect.any(String),
      watch: true,
    });
    expect(Number.isNaN(Date.parse(entry.startedAt))).toBe(false);
    expect(await readFile(join(dir, '.mockapi', '.gitignore'), 'utf8')).toContain('*');

    await unregister();
    expect(existsSync(path)).toBe(false);
    await unregister(); // twice is harmless
    unregister.sync();
  });

  it('lists every server of the file (several ports), not those of another file in the same folder', async () => {
    const other = join(dir, 'other.yaml');
    await writeFile(other, 'apiKey: mk_y\n');
    await registerServer(config, { url: 'http://127.0.0.1:4001' });
    await registerServer(config, { url: 'http://127.0.0.1:4002', watch: false });
    await registerServer(other, { url: 'http://127.0.0.1:4003' });

    const servers = await listServers(config);
    expect(servers.map((s) => [s.url, s.pid, s.watch])).toEqual([
      ['http://127.0.0.1:4001', process.pid, true],
      ['http://127.0.0.1:4002', process.pid, false],
    ]);
    expect((await listServers(other)).map((s) => s.url)).toEqual(['http://127.0.0.1:4003']);
  });

  it('finds the same servers through a relative path or a symlink to the config', async () => {
    await registerServer(config, { url: 'http://127.0.0.1:4001' });
    const link = join(dir, 'link.yaml');
    await symlink(config, link);
    expect((await listServers(link)).map((s) => s.url)).toEqual(['http://127.0.0.1:4001']);
    const relative = join(dir, '.', 'sub', '..', 'mockapi.yaml');
    expect((await listServers(relative)).map((s) => s.url)).toEqual(['http://127.0.0.1:4001']);
  });

  it('drops and deletes entries of dead processes, and leftover temporary files of dead writers', async () => {
    const pid = await deadPid();
    await registerServer(config, { url: 'http://127.0.0.1:4001' });
    await registerServer(config, { url: 'http://127.0.0.1:4005', pid });
    const servers = join(dir, '.mockapi', 'servers');
    await writeFile(join(servers, `.${pid}-4006.json.mockapi-tmp-${pid}-deadbeef`), '{"pid":');
    await writeFile(join(servers, 'notes.txt'), 'left alone');

    expect((await listServers(config)).map((s) => s.url)).toEqual(['http://127.0.0.1:4001']);
    expect((await readdir(servers)).sort()).toEqual([`${process.pid}-4001.json`, 'notes.txt']);
  });

  it('skips an unreadable entry of a live process without failing', async () => {
    await registerServer(config, { url: 'http://127.0.0.1:4001' });
    await writeFile(join(dir, '.mockapi', 'servers', `${process.pid}-4009.json`), '{ not json');
    expect((await listServers(config)).map((s) => s.url)).toEqual(['http://127.0.0.1:4001']);
  });

  it('lists nothing when no server ever registered', async () => {
    expect(await listServers(config)).toEqual([]);
    expect(await listServers(join(dir, 'missing', 'mockapi.yaml'))).toEqual([]);
  });

  it('unregisterSync removes the entry (for process exit handlers)', async () => {
    await registerServer(config, { url: 'http://127.0.0.1:4100' });
    unregisterSync(config, { url: 'http://127.0.0.1:4100' });
    expect(await listServers(config)).toEqual([]);
    unregisterSync(config, { url: 'http://127.0.0.1:4100' });
  });
});

// SPEC §5.4: "A state file or config that is a symlink stays a symlink: writes go to its target."
// (issue 12, item 9) — writeFileAtomic, rotate-key in-process, and the real CLI serving through a link.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, lstat, mkdir, readFile, readdir, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupTempFiles, writeFileAtomic } from '../../src/state/atomic-write.js';
import { BIN, removeDir, runCli, startServe, stopAll, tempDir } from '../helpers/cli.js';
import { rotateIn } from '../helpers/rotate.js';

const OLD_KEY = 'mk_symlinkOld000000000000000000000';
const CONFIG = `apiKey: ${OLD_KEY}  # through a link
endpoints:
  - method: GET
    path: /ping
    response:
      body: { pong: true }
`;

let dir: string;
let real: string;
let link: string;

beforeEach(async () => {
  dir = await tempDir('mockapi-symlink-');
  await mkdir(join(dir, 'shared'));
  await mkdir(join(dir, 'project'));
  real = join(dir, 'shared', 'mockapi.yaml');
  link = join(dir, 'project', 'mockapi.yaml');
  await writeFile(real, CONFIG);
  await symlink('../shared/mockapi.yaml', link); // relative, as `ln -s` users write it
});

afterEach(async () => {
  await stopAll();
  await removeDir(dir);
});

const isLink = async (path: string): Promise<boolean> => (await lstat(path)).isSymbolicLink();
const temporaries = async (folder: string): Promise<string[]> =>
  (await readdir(folder)).filter((n) => n.includes('mockapi-'));

describe('writeFileAtomic on a symlink', () => {
  it("writes the target, in the target's folder, keeps the link and the mode", async () => {
    await chmod(real, 0o600);
    await writeFileAtomic(link, 'new bytes\n');
    expect(await isLink(link)).toBe(true);
    expect(await readlink(link)).toBe('../shared/mockapi.yaml');
    expect(await readFile(real, 'utf8')).toBe('new bytes\n');
    expect((await stat(real)).mode & 0o777).toBe(0o600);
    expect(await temporaries(join(dir, 'shared'))).toEqual([]);
    expect(await temporaries(join(dir, 'project'))).toEqual([]);
  });

  it('follows a chain of links to the end', async () => {
    const second = join(dir, 'state.json');
    await symlink(link, second);
    await writeFileAtomic(second, '{"version":1}\n');
    expect(await isLink(second)).toBe(true);
    expect(await isLink(link)).toBe(true);
    expect(await readFile(real, 'utf8')).toBe('{"version":1}\n');
  });

  it('creates the missing target of a dangling link', async () => {
    const dangling = join(dir, 'project', 'state.json');
    await symlink(join(dir, 'shared', 'state.json'), dangling);
    await writeFileAtomic(dangling, '{}\n');
    expect(await isLink(dangling)).toBe(true);
    expect(await readFile(join(dir, 'shared', 'state.json'), 'utf8')).toBe('{}\n');
  });

  it('cleanupTempFiles looks beside the target, where the temporaries are written', async () => {
    const leftover = join(dir, 'shared', '.mockapi.yaml.mockapi-tmp-999999999-abcdef01');
    await writeFile(leftover, 'half');
    expect(await cleanupTempFiles(link)).toEqual([leftover]);
  });
});

describe('rotate-key on a symlinked config', () => {
  it('keeps the link and rotates the key in its target', async () => {
    const result = await rotateIn(link, { key: 'mk_throughTheLink' });
    expect(result.code).toBe(0);
    expect(result.err).toEqual([`rotated apiKey in ${link}; no running servers`]);
    expect(await isLink(link)).toBe(true);
    expect(await readFile(real, 'utf8')).toBe(CONFIG.replace(OLD_KEY, 'mk_throughTheLink'));
    expect(await temporaries(join(dir, 'shared'))).toEqual([]);
  });
});

async function status(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/mock/ping`, { headers: { 'x-api-key': key } });
  await res.body?.cancel();
  return res.status;
}

// npm test builds first; a missing build must fail these tests, not skip them.
describe('the built CLI through a symlink', () => {
  it('serve -c <link>, rotate-key -c <link>: confirmed, old key 401, link kept', async () => {
    const server = await startServe(['-c', link]);
    expect(await status(server.url, OLD_KEY)).toBe(200);
    const result = await runCli(['rotate-key', '-c', link]);
    expect(result.code).toBe(0);
    const key = result.stdout.trim();
    expect(result.stderr.trim()).toBe(`rotated apiKey in ${link}; 1 running server confirmed`);
    expect(await isLink(link)).toBe(true);
    expect(await readFile(real, 'utf8')).toBe(CONFIG.replace(OLD_KEY, key));
    expect(await status(server.url, OLD_KEY)).toBe(401);
    expect(await status(server.url, key)).toBe(200);
  });

  it('serve -c <link>, rotate-key -c <the real file>: the server is found and confirms', async () => {
    const server = await startServe(['-c', link]);
    const result = await runCli(['rotate-key', '-c', real]);
    expect(result.code).toBe(0);
    expect(result.stderr.trim()).toBe(`rotated apiKey in ${real}; 1 running server confirmed`);
    expect(await status(server.url, OLD_KEY)).toBe(401);
    expect(await status(server.url, result.stdout.trim())).toBe(200);
  });
});

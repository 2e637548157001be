// Black-box: hot reload never stops working (SPEC §5.5), whatever sequence of saves reaches the
// config or a bodyFile — in place, by rename, several within a millisecond, delete and re-create.
// The real CLI serves with watching on; after each burst the test waits (a condition, with a
// deadline) until /__mockapi/health shows the sha256 of the file's final bytes.
import { beforeEach, describe, expect, test } from 'vitest';
import { request } from 'undici';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, useTempDir, waitFor, writeConfig, type ServeProcess } from '../helpers/cli.js';
import { hasSed, save, saveBurst, sedInPlace } from '../helpers/saves.js';

const KEY = 'mk_reloadSaves0123456789abcdefghijklm';
/** A valid config whose bytes differ by `project`; `extra` adds endpoints (block style). */
const config = (project: string, extra = ''): string =>
  `project: ${project}\napiKey: ${KEY}\nendpoints:\n  - { method: GET, path: /ping, response: { body: { pong: true } } }\n${extra}`;

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** The deadline for a save to be served: the SPEC's second, with room for a loaded 2-core machine. */
const SERVED_WITHIN_MS = 3000;

async function revision(server: ServeProcess): Promise<string> {
  const res = await request(`${server.url}/__mockapi/health`);
  return ((await res.body.json()) as { revision: string }).revision;
}

/** Waits until the server serves exactly the bytes now in `file`. */
async function expectServed(server: ServeProcess, file: string): Promise<void> {
  const wanted = sha256(readFileSync(file));
  await waitFor(async () => (await revision(server)) === wanted, SERVED_WITHIN_MS).catch(async (err: Error) => {
    throw new Error(`${err.message}; health revision ${await revision(server)}, file ${wanted}`);
  });
}

const temp = useTempDir('mockapi-reload-saves-', { each: true });
let file: string;

beforeEach(async () => {
  file = await writeConfig(temp.path, config('start'));
});

const serve = (): Promise<ServeProcess> => startServe(['-c', file, '--no-state', '--log', 'off'], { cwd: temp.path });

describe('hot reload never stops working (SPEC §5.5)', () => {
  test('two rename-saves within a few ms, then a save in place, then one by rename: each is served', async () => {
    const server = await serve();
    for (let round = 0; round < 5; round++) {
      save(file, 'rename', config(`a${round}`));
      save(file, 'rename', config(`b${round}`));
      await expectServed(server, file);
      save(file, 'inPlace', config(`c${round}`));
      await expectServed(server, file);
      save(file, 'rename', config(`d${round}`));
      await expectServed(server, file);
    }
    expect(server.child.exitCode).toBe(null);
    expect(await server.stop()).toBe(0);
  });

  test.skipIf(!hasSed())(
    '`sed -i` twice in a row, then a save in place, then one by rename: each is served',
    async () => {
      const server = await serve();
      for (let round = 0; round < 5; round++) {
        sedInPlace(file, `s/^project: .*/project: sed-a${round}/`);
        sedInPlace(file, `s/^project: .*/project: sed-b${round}/`);
        await expectServed(server, file);
        save(file, 'inPlace', config(`c${round}`));
        await expectServed(server, file);
        save(file, 'rename', config(`d${round}`));
        await expectServed(server, file);
      }
      expect(await server.stop()).toBe(0);
    },
  );

  test('20 bursts of mixed saves (in place, rename, several within a millisecond, delete and re-create): the final bytes are served each time', async () => {
    const server = await serve();
    for (let round = 0; round < 20; round++) {
      saveBurst(file, round, (step) => config(`burst-${round}-${step}`));
      await expectServed(server, file);
    }
    expect(server.child.exitCode).toBe(null);
    expect(await server.stop()).toBe(0);
  });

  test('a bodyFile saved by rename twice within a few ms, then in place: the final body is served each time', async () => {
    await mkdir(join(temp.path, 'fixtures'));
    const body = join(temp.path, 'fixtures', 'user.json');
    await writeFile(body, '{"v":"start"}');
    await writeFile(
      file,
      config('body', '  - method: GET\n    path: /user\n    response:\n      bodyFile: fixtures/user.json\n'),
    );
    const server = await serve();
    const served = async (): Promise<string> => {
      const res = await request(`${server.url}/mock/user`, { headers: { 'x-api-key': KEY } });
      return res.body.text();
    };
    for (let round = 0; round < 5; round++) {
      save(body, 'rename', `{"v":"a${round}"}`);
      save(body, 'rename', `{"v":"b${round}"}`);
      await waitFor(async () => (await served()) === `{"v":"b${round}"}`, SERVED_WITHIN_MS);
      save(body, 'inPlace', `{"v":"c${round}"}`);
      await waitFor(async () => (await served()) === `{"v":"c${round}"}`, SERVED_WITHIN_MS);
    }
    expect(await server.stop()).toBe(0);
  });

  test('rotate-key after two rename-saves within a few ms: the old key is refused at once, every time', async () => {
    const server = await serve();
    const status = async (key: string): Promise<number> =>
      (await request(`${server.url}/mock/ping`, { headers: { 'x-api-key': key } })).statusCode;
    let previous = KEY;
    for (let round = 0; round < 3; round++) {
      const text = readFileSync(file, 'utf8');
      save(file, 'rename', text.replace(/^project: .*$/m, `project: quick-a${round}`));
      save(file, 'rename', text.replace(/^project: .*$/m, `project: quick-b${round}`));
      await expectServed(server, file);
      const rotated = await runCli(['rotate-key', '-c', file], { cwd: temp.path });
      expect(rotated.code).toBe(0);
      const key = rotated.stdout.trim();
      expect(key).toMatch(/^mk_[0-9A-Za-z]{32}$/);
      expect(await status(previous)).toBe(401);
      expect(await status(key)).toBe(200);
      previous = key;
    }
    expect(await server.stop()).toBe(0);
  });
});

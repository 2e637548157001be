// `serve --workers 2`: every worker reloads the config on its own, but the reload line and the
// warning of a config not reloaded are printed once for the server, not once per worker.
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe, useTempDir, waitFor, writeConfig } from '../helpers/cli.js';
import { workerUrls } from '../helpers/workers.js';

const KEY = 'mk_workers_lines_key_0123456789';
const dir = useTempDir('mockapi-workers-lines-');

const config = (paths: string[]) =>
  `project: lines\napiKey: ${KEY}\nendpoints:\n${paths.map((p) => `  - method: GET\n    path: ${p}\n    response: { body: { at: ${p} } }\n`).join('')}`;

/** Writes the config as an editor saving atomically does (a temporary file renamed over it): no reader sees half a file. */
async function save(file: string, text: string): Promise<void> {
  const temp = join(dir.path, `.mockapi.yaml.${Math.random().toString(36).slice(2)}.tmp`);
  await writeFile(temp, text);
  await rename(temp, file);
}

async function status(url: string): Promise<number> {
  return (await fetch(url, { headers: { 'x-api-key': KEY } })).status;
}

/** Each worker, on its own port, answers `path` (its reload is done). */
function servedByEach(own: string[], path: string): Promise<boolean> {
  return waitFor(async () => {
    for (const url of own) if ((await status(`${url}/mock${path}`)) !== 200) return false;
    return true;
  });
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern, 'g'))?.length ?? 0;

describe('serve --workers: lines every worker would print alike', () => {
  it('prints each reload and each config not reloaded once, not once per worker', async () => {
    const file = await writeConfig(dir.path, config(['/a']));
    const serve = await startServe(['-c', file, '--workers', '2', '--no-state', '--log', 'off'], { cwd: dir.path });
    const own = await waitFor(async () => {
      const urls = await workerUrls(dir.path);
      return urls.length === 2 ? urls : undefined;
    });

    await save(file, config(['/a', '/b']));
    await servedByEach(own, '/b');
    await serve.waitForOutput(/reloaded mockapi\.yaml: \+1 endpoint \(GET \/b\)/);

    await save(file, `${config(['/a', '/b'])}  - method: NOPE\n`);
    await serve.waitForOutput(/config not reloaded, still serving the last good one/);

    // A later reload each worker has made: each one's lines of the two saves before were written before it.
    await save(file, config(['/a', '/b', '/c']));
    await servedByEach(own, '/c');
    await serve.waitForOutput(/reloaded mockapi\.yaml: \+1 endpoint \(GET \/c\)/);
    // Stopped, its output is complete.
    expect(await serve.stop('SIGTERM')).toBe(0);

    const stderr = serve.stderr();
    expect(count(stderr, /reloaded mockapi\.yaml: \+1 endpoint \(GET \/b\)/), stderr).toBe(1);
    expect(count(stderr, /reloaded mockapi\.yaml: \+1 endpoint \(GET \/c\)/), stderr).toBe(1);
    expect(count(stderr, /config not reloaded, still serving the last good one/), stderr).toBe(1);
  });
});

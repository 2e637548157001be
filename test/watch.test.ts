import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, mkdir, rename, rm, unlink, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchConfig, type ConfigWatcher } from '../src/watch/watch.js';

let dir: string;
let file: string;
let watcher: ConfigWatcher | undefined;
let calls: number;
let errors: Error[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-watch-'));
  file = join(dir, 'mockapi.yaml');
  await writeFile(file, 'apiKey: mk_one\n');
  calls = 0;
  errors = [];
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function start(extraFiles?: string[], debounceMs = 50): Promise<ConfigWatcher> {
  watcher = watchConfig({ file, extraFiles, debounceMs, onChange: () => calls++, onError: (e) => errors.push(e) });
  await watcher.ready;
  return watcher;
}

/** Waits until `calls` reaches n, then a few debounce periods more to make sure no extra call comes. */
async function expectCalls(n: number): Promise<void> {
  if (n > 0) await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(n), { timeout: 3000, interval: 10 });
  const settleUntil = Date.now() + 300;
  while (Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 20));
  expect(calls).toBe(n);
}

describe('watchConfig', () => {
  it('fires once for a burst of in-place writes', async () => {
    await start();
    for (let i = 0; i < 10; i++) await appendFile(file, `# ${i}\n`);
    await expectCalls(1);
    expect(errors).toEqual([]);
  });

  it('fires after an editor-style atomic save (write a temp file, rename it over)', async () => {
    await start();
    const tmp = join(dir, '.mockapi.yaml.swp-tmp');
    await writeFile(tmp, 'apiKey: mk_two\n');
    await rename(tmp, file);
    await expectCalls(1);
    // And keeps watching the new file: a second save is seen too.
    await writeFile(tmp, 'apiKey: mk_three\n');
    await rename(tmp, file);
    await expectCalls(2);
  });

  it('fires after delete and re-create, and keeps watching', async () => {
    await start();
    await unlink(file);
    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(1), { timeout: 3000, interval: 10 });
    const before = calls;
    await writeFile(file, 'apiKey: mk_back\n');
    await vi.waitFor(() => expect(calls).toBeGreaterThan(before), { timeout: 3000, interval: 10 });
    const afterRecreate = calls;
    await appendFile(file, '# edited\n');
    await vi.waitFor(() => expect(calls).toBeGreaterThan(afterRecreate), { timeout: 3000, interval: 10 });
  });

  it('ignores other files in the same folder', async () => {
    await start();
    await writeFile(join(dir, 'other.yaml'), 'x: 1\n');
    await writeFile(join(dir, '.mockapi.yaml.mockapi-tmp-1-ab'), 'x: 1\n');
    await expectCalls(0);
    await appendFile(file, '# now\n'); // a real change after the noise: events are being delivered
    await expectCalls(1);
  });

  it('fires for an extra file (a bodyFile in a subfolder), also after setExtraFiles', async () => {
    await mkdir(join(dir, 'fixtures'));
    const body = join(dir, 'fixtures', 'order.json');
    const later = join(dir, 'fixtures', 'later.json');
    await writeFile(body, '{}');
    await writeFile(later, '{}');
    const w = await start([body]);
    await writeFile(body, '{"id":1}');
    await expectCalls(1);

    await writeFile(later, '{"id":2}'); // not watched yet
    w.setExtraFiles([later]);
    await w.ready;
    calls = 0;
    await writeFile(later, '{"id":3}');
    await expectCalls(1);
    await writeFile(body, '{"id":4}'); // no longer watched
    await appendFile(file, '# marker\n');
    await expectCalls(2);
  });

  it('does not fire after close', async () => {
    const w = await start();
    await appendFile(file, '# a\n');
    await w.close();
    const settleUntil = Date.now() + 200;
    while (Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(0);
  });

  it('reports an exception thrown by onChange instead of crashing', async () => {
    watcher = watchConfig({
      file,
      onChange: () => {
        throw new Error('boom');
      },
      onError: (e) => errors.push(e),
    });
    await watcher.ready;
    await appendFile(file, '# a\n');
    await vi.waitFor(() => expect(errors.map((e) => e.message)).toEqual(['boom']), { timeout: 3000, interval: 10 });
  });
});

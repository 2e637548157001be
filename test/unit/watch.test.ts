import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, mkdir, open, rename, rm, symlink, unlink, writeFile, appendFile } from 'node:fs/promises';
import { appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchConfig, type ConfigWatcher } from '../../src/watch/watch.js';
import { save, saveBurst } from '../helpers/saves.js';

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
    // One burst: written without yielding, so no gap between two writes outlasts the 50 ms debounce on
    // a loaded machine (an awaited write each could be descheduled that long, and count as two bursts).
    for (let i = 0; i < 10; i++) appendFileSync(file, `# ${i}\n`);
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

  it('a file truncated, then written after a pause (a save on its way), is reported once, with what was written', async () => {
    const read: string[] = [];
    watcher = watchConfig({
      file,
      debounceMs: 50,
      onChange: () => {
        calls++;
        read.push(readFileSync(file, 'utf8'));
      },
      onError: (e) => errors.push(e),
    });
    await watcher.ready;
    const handle = await open(file, 'w'); // truncates, as fs.writeFile does before it writes
    // The writer pauses longer than the debounce (a loaded machine) and shorter than the hold.
    await new Promise((r) => setTimeout(r, 200));
    await handle.writeFile('apiKey: mk_after\n');
    await handle.close();
    await expectCalls(1);
    expect(read).toEqual(['apiKey: mk_after\n']);
  });

  it('a file left empty is reported, once the hold is over', async () => {
    await start();
    await writeFile(file, '');
    await expectCalls(1);
    expect(errors).toEqual([]);
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

const SAVE_KINDS = ['inPlace', 'rename', 'recreate'] as const;
/** Native events alone (the periodic check made an hour long) must be enough, as must both together. */
const MECHANISMS: [string, { pollMs?: number }][] = [
  ['with both mechanisms', {}],
  ['with native events alone', { pollMs: 3_600_000 }],
];

describe('watchConfig never stops watching (SPEC §5.5)', () => {
  /** What the last onChange read, like the server's reload does; undefined while the file is missing. */
  let lastRead: string | undefined;

  async function startReading(extra: { pollMs?: number; nativeEvents?: boolean } = {}): Promise<ConfigWatcher> {
    watcher = watchConfig({
      file,
      ...extra,
      onChange: () => {
        try {
          lastRead = readFileSync(file, 'utf8');
        } catch {
          lastRead = undefined;
        }
      },
      onError: (e) => errors.push(e),
    });
    await watcher.ready;
    return watcher;
  }

  /** Waits until onChange has read exactly `text` (a condition, not a sleep). */
  async function expectRead(text: string): Promise<void> {
    await vi.waitFor(() => expect(lastRead).toBe(text), { timeout: 3000, interval: 10 });
  }

  it.each(MECHANISMS)(
    'two rename-saves within a millisecond, then saves in place and by rename: every final version is read (%s)',
    async (_name, extra) => {
      await startReading(extra);
      for (let round = 0; round < 10; round++) {
        save(file, 'rename', `apiKey: mk_a${round}\n`);
        save(file, 'rename', `apiKey: mk_b${round}\n`);
        await expectRead(`apiKey: mk_b${round}\n`);
        save(file, 'inPlace', `apiKey: mk_c${round}\n`);
        await expectRead(`apiKey: mk_c${round}\n`);
        save(file, 'rename', `apiKey: mk_d${round}\n`);
        await expectRead(`apiKey: mk_d${round}\n`);
      }
      expect(errors).toEqual([]);
    },
  );

  it.each(MECHANISMS)(
    '20 bursts of mixed saves (in place, rename, delete and re-create, several within a millisecond): each final version is read (%s)',
    async (_name, extra) => {
      await startReading(extra);
      for (let round = 0; round < 20; round++) {
        const text = saveBurst(file, round, (step) => `apiKey: mk_r${round}s${step}\n`);
        await expectRead(text);
      }
      expect(errors).toEqual([]);
    },
  );

  it('an extra file saved by rename twice within a millisecond, then in place, is still watched', async () => {
    const body = join(dir, 'body.json');
    await writeFile(body, '{}');
    calls = 0;
    watcher = watchConfig({ file, extraFiles: [body], onChange: () => calls++, onError: (e) => errors.push(e) });
    await watcher.ready;
    for (let round = 0; round < 5; round++) {
      const atStart = calls;
      save(body, 'rename', `{"a":${round}}`);
      save(body, 'rename', `{"b":${round}}`);
      // Exactly one call for the burst, then an in-place save must still be seen.
      await expectCalls(atStart + 1);
      const before = calls;
      save(body, 'inPlace', `{"c":${round}}`);
      await vi.waitFor(() => expect(calls).toBeGreaterThan(before), { timeout: 3000, interval: 10 });
    }
  });

  it('without native events (a network share), the periodic check still sees every kind of save', async () => {
    await startReading({ nativeEvents: false });
    for (let round = 0; round < SAVE_KINDS.length * 2; round++) {
      const text = `apiKey: mk_poll${round}\n`;
      save(file, SAVE_KINDS[round % SAVE_KINDS.length] as 'inPlace', text);
      await expectRead(text);
    }
  });

  it('a bodyFile whose folder is swapped by a symlink (a Kubernetes ConfigMap update) is watched at its new place after the next burst, periodic check off', async () => {
    // No event reaches the old watch: the old file is untouched, only the link above it changed.
    // The next burst finds the file's signature changed and re-arms it, so native events flow again.
    const release = async (name: string): Promise<void> => {
      await mkdir(join(dir, name));
      await writeFile(join(dir, name, 'body.json'), `{"release":"${name}"}`);
    };
    await release('r0');
    await symlink('r0', join(dir, 'current'));
    const body = join(dir, 'current', 'body.json');
    let lastBody: string | undefined;
    watcher = watchConfig({
      file,
      extraFiles: [body],
      pollMs: 3_600_000,
      onChange: () => (lastBody = readFileSync(body, 'utf8')),
      onError: (e) => errors.push(e),
    });
    await watcher.ready;
    for (let round = 0; round < 3; round++) {
      const target = `r${round + 1}`;
      await release(target);
      await symlink(target, join(dir, 'current.next'));
      await rename(join(dir, 'current.next'), join(dir, 'current'));
      await appendFile(file, `# swap ${round}\n`); // a burst, for another file
      await vi.waitFor(() => expect(lastBody).toBe(`{"release":"${target}"}`), { timeout: 3000, interval: 10 });
      save(body, 'inPlace', `{"edit":${round}}`); // through the link: the new folder's file
      await vi.waitFor(() => expect(lastBody).toBe(`{"edit":${round}}`), { timeout: 3000, interval: 10 });
    }
    expect(errors).toEqual([]);
  });
});

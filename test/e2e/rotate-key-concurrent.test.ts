// rotate-key against saves made by someone else while it runs (SPEC §5.5, last sentence; issue 12
// items 7 and 10): never lose the other save — apply the key to the newest bytes, or exit 1 with the
// save in place — and count a server that serves a later save carrying the new key as confirmed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { open, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { existsSync, renameSync, watch, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RotateKeyDeps } from '../../src/cli/commands/rotate-key.js';
import { registerServer, type Unregister } from '../../src/state/registry.js';
import { BIN, removeDir, runCli, tempDir } from '../helpers/cli.js';
import { rotateIn, sha256, startEditor } from '../helpers/rotate.js';

const OLD_KEY = 'mk_concurrentOld00000000000000000';
const CONFIG = `# shop mock
apiKey: ${OLD_KEY}
endpoints:
  - method: GET
    path: /ping
    response:
      body: { pong: true }
`;
const ROUNDS = 30;
const SAVES = 40;

let dir: string;
let file: string;
let unregister: Unregister | undefined;

beforeEach(async () => {
  dir = await tempDir('mockapi-rotate-race-');
  file = join(dir, 'mockapi.yaml');
  await writeFile(file, CONFIG);
});

afterEach(async () => {
  await unregister?.();
  unregister = undefined;
  await removeDir(dir);
});

/** Registers a stand-in server so rotate-key waits; its health answer comes from `fetchRevision`. */
async function registerStandIn(): Promise<void> {
  unregister = await registerServer(file, { url: 'http://127.0.0.1:9' });
}

/** A server that reloads at once: it always serves the file's current bytes. */
const servesCurrentFile = async (): Promise<string> => sha256(await readFile(file).catch(() => Buffer.alloc(0)));

const apiKeyIn = (text: string): string | undefined => /^apiKey: (\S+)$/m.exec(text)?.[1];

async function leftovers(): Promise<string[]> {
  return (await readdir(dir)).filter(
    (n) => n.includes('mockapi-tmp') || n.includes('mockapi-prev') || n.includes('editor-tmp'),
  );
}

describe('an editor saving while rotate-key runs', () => {
  it(`keeps the last save, in place or by rename, and the key (${ROUNDS} rounds against another process)`, async () => {
    await registerStandIn();
    const outcomes = { reapplied: 0, failed: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      await writeFile(file, CONFIG);
      const editor = startEditor(file, SAVES);
      let editorDone = false;
      const done = editor.done.then((last) => ((editorDone = true), last));
      await editor.started;
      // The stand-in server confirms only after the editor stopped: every save then happened while
      // rotate-key ran, and its last look at the file comes after the last save.
      const deps: RotateKeyDeps = {
        pollIntervalMs: 2,
        timeoutMs: 20_000,
        fetchRevision: async () => (editorDone ? servesCurrentFile() : 'reloading'),
      };
      const result = await rotateIn(file, {}, deps);
      const last = await done;
      const text = await readFile(file, 'utf8');
      expect({ round, lastSave: text.endsWith(`# edit ${last}\n`) }).toEqual({ round, lastSave: true });
      // Exit 0: the key is in the newest version. Exit 1 is allowed too: the saves are in place (above).
      if (result.code === 0) expect({ round, key: apiKeyIn(text) }).toEqual({ round, key: result.out[0] });
      else outcomes.failed++;
      if (result.err.some((l) => l.startsWith('note:'))) outcomes.reapplied++;
      expect(await leftovers()).toEqual([]);
    }
    // The rounds did meet saves made after rotate-key read the file (else this test proves little),
    // and mostly still rotated.
    expect(outcomes.reapplied).toBeGreaterThan(0);
    expect(outcomes.failed).toBeLessThan(ROUNDS / 2);
  }, 120_000);
});

// No running server here: hot reload under such a burst of rename-saves is issue 12 item 1 (watch.ts);
// a server that stops reloading would only make every round wait 5 s for its confirmation.
// npm test builds first; a missing build must fail these tests, not skip them.
describe('the built CLI while an editor saves', () => {
  it('keeps the last save (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const editor = startEditor(file, 400); // outlasts the CLI's start-up
      await editor.started;
      const result = await runCli(['rotate-key', '-c', file]);
      const last = await editor.done;
      const text = await readFile(file, 'utf8');
      expect({
        round,
        lastSave: text.endsWith(`# edit ${last}\n`),
        code: result.code === 0 || result.code === 1,
      }).toEqual({ round, lastSave: true, code: true });
      expect(await leftovers()).toEqual([]);
      // No key check: the editor goes on saving (from what it read) after rotate-key has exited.
      await writeFile(file, CONFIG);
    }
  }, 120_000);
});

describe("a save made the moment rotate-key writes its temporary file (the issue's repro)", () => {
  it('is kept, with the key applied to it (12 rounds, in place and by rename)', async () => {
    for (let round = 0; round < 12; round++) {
      await writeFile(file, CONFIG);
      const saved = `${CONFIG}# saved while rotate-key writes ${round}\n`;
      let fired = false;
      const watcher = watch(dir, (_event, name) => {
        if (fired || !name?.includes('.mockapi-tmp-')) return;
        fired = true;
        if (round % 2) writeFileSync(file, saved);
        else {
          writeFileSync(`${file}.editor-tmp`, saved);
          renameSync(`${file}.editor-tmp`, file);
        }
      });
      const result = await rotateIn(file);
      watcher.close();
      const text = await readFile(file, 'utf8');
      expect({ round, fired, code: result.code, text }).toEqual({
        round,
        fired: true,
        code: 0,
        text: saved.replace(OLD_KEY, result.out[0] as string),
      });
    }
  });
});

describe('a save at the critical point (injected)', () => {
  const appended = `${CONFIG}# added by the editor\n`;
  /** The hook runs before every attempt; the editor saves once. */
  const once = (save: () => Promise<unknown>) => {
    let saved = false;
    return async () => {
      if (!saved) await save();
      saved = true;
    };
  };

  it('in place, after the new bytes are written and before the swap: kept, key applied to it', async () => {
    const result = await rotateIn(
      file,
      { key: 'mk_newKey' },
      { hooks: { beforeSwap: once(() => writeFile(file, appended)) } },
    );
    expect(result.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(appended.replace(OLD_KEY, 'mk_newKey'));
    expect(result.err).toEqual([
      `note: ${file} was saved by someone else while the key was rotated; the new key was applied to the newest version`,
      `rotated apiKey in ${file}; no running servers`,
    ]);
    expect(await leftovers()).toEqual([]);
  });

  it('by rename, before the swap: kept, key applied to it', async () => {
    const save = async (): Promise<void> => {
      await writeFile(`${file}.editor-tmp`, appended);
      await rename(`${file}.editor-tmp`, file);
    };
    const result = await rotateIn(file, { key: 'mk_newKey' }, { hooks: { beforeSwap: once(save) } });
    expect(result.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(appended.replace(OLD_KEY, 'mk_newKey'));
  });

  it('a save that breaks the config: exit 1, the broken save left in place', async () => {
    const broken = CONFIG.replace('path: /ping', 'path: no-slash');
    const result = await rotateIn(
      file,
      { key: 'mk_newKey' },
      { hooks: { beforeSwap: once(() => writeFile(file, broken)) } },
    );
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err.at(-1)).toBe(`${file} is not a valid config; the key was not rotated`);
    expect(await readFile(file, 'utf8')).toBe(broken);
    expect(await leftovers()).toEqual([]);
  });

  it('a write into the replaced file through a descriptor opened before the swap: put back, key applied', async () => {
    let handle: FileHandle | undefined;
    const result = await rotateIn(
      file,
      { key: 'mk_newKey' },
      {
        hooks: {
          beforeSwap: once(async () => (handle = await open(file, 'r+'))), // no truncation: the swap cannot see it coming
          afterSwap: once(async () => {
            await handle!.write(Buffer.from('# ok'), 0, 4, 0);
            await handle!.close();
          }),
        },
      },
    );
    expect(result.err[0]).toMatch(/^note: .* was saved by someone else/);
    expect(result.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(`# ok${CONFIG.slice(4)}`.replace(OLD_KEY, 'mk_newKey'));
    expect(await leftovers()).toEqual([]);
  });
});

describe('saves right after the rotation, before the servers confirm (item 10)', () => {
  it('a save that keeps the new key: the server serving it confirms, no warning', async () => {
    await registerStandIn();
    let saved = false;
    const fetchRevision = async (): Promise<string> => {
      if (!saved) {
        saved = true; // the editor reloads the rotated file, adds a line and saves; the server reloads
        await writeFile(file, `${await readFile(file, 'utf8')}# saved after the rotation\n`);
      }
      return servesCurrentFile();
    };
    const result = await rotateIn(file, { key: 'mk_newKey' }, { fetchRevision, pollIntervalMs: 2, timeoutMs: 1000 });
    expect(result.code).toBe(0);
    expect(result.err).toEqual([`rotated apiKey in ${file}; 1 running server confirmed`]);
    expect(await readFile(file, 'utf8')).toBe(`${CONFIG.replace(OLD_KEY, 'mk_newKey')}# saved after the rotation\n`);
  });

  it('a save made from the old text (the old key back): the key is applied again, the save kept', async () => {
    await registerStandIn();
    let saved = false;
    const fetchRevision = async (): Promise<string> => {
      if (!saved) {
        saved = true;
        await writeFile(file, `${CONFIG}# saved from a stale buffer\n`);
      }
      return servesCurrentFile();
    };
    const result = await rotateIn(file, { key: 'mk_newKey' }, { fetchRevision, pollIntervalMs: 2, timeoutMs: 1000 });
    expect(result.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(`${CONFIG.replace(OLD_KEY, 'mk_newKey')}# saved from a stale buffer\n`);
    expect(result.err).toEqual([
      `note: ${file} was saved by someone else while the key was rotated; the new key was applied to the newest version`,
      `rotated apiKey in ${file}; 1 running server confirmed`,
    ]);
  });
});

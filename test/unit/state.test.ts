import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  parseState,
  resetStateFile,
  resolveStateFile,
  writeStateFile,
  type WriteFn,
} from '../../src/state/state-file.js';
import { createMemoryUsageStore, createUsageStore, type UsageStore } from '../../src/state/usage-store.js';
import type { Logger } from '../../src/logger.js';

const NOV = Date.parse('2026-11-15T12:00:00Z');
const DEC = Date.parse('2026-12-01T00:00:00Z');
const stateText = (month: string, requests: number) =>
  `${JSON.stringify({ version: 1, usage: { month, requests } })}\n`;

function collectingLogger() {
  const lines = { info: [] as string[], warn: [] as string[], error: [] as string[] };
  const logger: Logger = {
    info: (m) => lines.info.push(m),
    warn: (m) => lines.warn.push(m),
    error: (m) => lines.error.push(m),
  };
  return { logger, lines };
}

/** chmod does not stop root: find out with a real write whether a read-only folder refuses writes. */
async function readOnlyFoldersWork(dir: string): Promise<boolean> {
  const probe = join(dir, 'probe');
  await mkdir(probe);
  await chmod(probe, 0o555);
  try {
    await writeFile(join(probe, 'x'), 'x');
    return false;
  } catch {
    return true;
  } finally {
    await chmod(probe, 0o755);
    await rm(probe, { recursive: true, force: true });
  }
}

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-state-'));
  file = join(dir, '.mockapi', 'state.json');
});

afterEach(async () => {
  await chmod(dir, 0o755).catch(() => {});
  await chmod(join(dir, '.mockapi'), 0o755).catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

describe('resolveStateFile', () => {
  it.each([
    { state: undefined, expected: join('/p/app', '.mockapi', 'state.json') },
    { state: false as const, expected: undefined },
    { state: 'usage.json', expected: resolve('usage.json') },
    { state: '/var/tmp/u.json', expected: '/var/tmp/u.json' },
  ])('$state → $expected', ({ state, expected }) => {
    expect(resolveStateFile('/p/app', state)).toBe(expected);
  });
});

describe('parseState', () => {
  it.each([
    { text: '{"version":1,"usage":{"month":"2026-11","requests":42}}', expected: { month: '2026-11', requests: 42 } },
    {
      text: '{"version":1,"usage":{"month":"2026-11","requests":0},"extra":true}',
      expected: { month: '2026-11', requests: 0 },
    },
    { text: '{"version":1,"usage":{"month":"2026-11","requests":42', expected: 'not valid JSON' },
    { text: '', expected: 'not valid JSON' },
    { text: '[]', expected: 'not a JSON object' },
    { text: '{"version":2,"usage":{"month":"2026-11","requests":1}}', expected: 'expected "version": 1, got 2' },
    { text: '{"usage":{"month":"2026-11","requests":1}}', expected: 'expected "version": 1, got none' },
    { text: '{"version":1,"usage":7}', expected: '"usage" is not an object' },
    {
      text: '{"version":1,"usage":{"month":"2026-13","requests":1}}',
      expected: '"usage.month" is not a YYYY-MM month',
    },
    {
      text: '{"version":1,"usage":{"month":"2026-11","requests":-1}}',
      expected: '"usage.requests" is not a non-negative integer',
    },
    {
      text: '{"version":1,"usage":{"month":"2026-11","requests":1.5}}',
      expected: '"usage.requests" is not a non-negative integer',
    },
    {
      text: '{"version":1,"usage":{"month":"2026-11","requests":"3"}}',
      expected: '"usage.requests" is not a non-negative integer',
    },
  ])('$text', ({ text, expected }) => {
    expect(parseState(text)).toEqual(expected);
  });
});

describe('createUsageStore', () => {
  it('starts at 0 without a file and writes .mockapi/state.json with its .gitignore', async () => {
    const store = await createUsageStore({ file, clock: () => NOV, flushIntervalMs: 60_000 });
    expect(store.file).toBe(file);
    expect(store.count(NOV)).toBe(0);
    await expect(readdir(dir)).resolves.toEqual([]); // nothing written before the first change
    expect(store.increment(NOV)).toBe(1);
    expect(store.increment(NOV)).toBe(2);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 2));
    expect(await readFile(join(dir, '.mockapi', '.gitignore'), 'utf8')).toContain('*');
  });

  it('continues from the count of this month', async () => {
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, stateText('2026-11', 41));
    const store = await createUsageStore({ file, clock: () => NOV });
    expect(store.count(NOV)).toBe(41);
    expect(store.increment(NOV)).toBe(42);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 42));
  });

  it('starts at 0 when the file holds a previous month', async () => {
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, stateText('2026-10', 9_999));
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger });
    expect(store.count(NOV)).toBe(0);
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 1));
    expect(lines.warn).toEqual([]);
  });

  it("sets a file of a later month than the clock aside (a future --clock left it), then counts and saves the clock's month", async () => {
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, stateText('2027-03', 5));
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger, flushIntervalMs: 60_000 });
    const aside = `${file}.later-month-2026-11-15T12-00-00-000Z`;
    expect(lines.warn).toEqual([
      `usage state ${file} holds 2027-03 (5 requests), a later month than the server's clock (2026-11); moved it to ${aside} and counting goes on in 2026-11`,
    ]);
    expect(await readFile(aside, 'utf8')).toBe(stateText('2027-03', 5));
    expect(store.count(NOV)).toBe(0);
    for (let i = 0; i < 3; i++) store.increment(NOV);
    await store.flush();
    expect(store.count(NOV)).toBe(3); // a write keeps the count: the quota still holds
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 3));
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 4));
  });

  it('restarts at 0 when the month changes while running (Dec 31 → Jan 1)', async () => {
    const last = Date.parse('2026-12-31T23:59:59.999Z');
    const next = Date.parse('2027-01-01T00:00:00Z');
    const store = await createUsageStore({ file, clock: () => last });
    store.increment(last);
    store.increment(last);
    expect(store.count(next)).toBe(0);
    expect(store.increment(next)).toBe(1);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2027-01', 1));
  });

  it.each([
    { name: 'bad JSON', text: '{"version":1,"usage":{', reason: 'not valid JSON' },
    {
      name: 'wrong shape',
      text: '{"version":1,"usage":{"month":"nov","requests":3}}',
      reason: '"usage.month" is not a YYYY-MM month',
    },
    {
      name: 'wrong version',
      text: '{"version":2,"usage":{"month":"2026-11","requests":3}}',
      reason: 'expected "version": 1, got 2',
    },
  ])('sets a corrupt file ($name) aside, says where, and starts at 0', async ({ text, reason }) => {
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, text);
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger });
    const aside = `${file}.corrupt-2026-11-15T12-00-00-000Z`;
    expect(lines.warn).toEqual([
      `usage state ${file} is corrupt (${reason}); moved it to ${aside} and started this month at 0`,
    ]);
    expect(await readFile(aside, 'utf8')).toBe(text);
    expect(store.count(NOV)).toBe(0);
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 1));
    expect(await readFile(aside, 'utf8')).toBe(text);
  });

  it('never sets a corrupt file aside over an earlier one', async () => {
    await mkdir(join(dir, '.mockapi'));
    const aside = `${file}.corrupt-2026-11-15T12-00-00-000Z`;
    await writeFile(aside, 'earlier');
    await writeFile(file, 'later');
    await createUsageStore({ file, clock: () => NOV });
    expect(await readFile(aside, 'utf8')).toBe('earlier');
    expect(await readFile(`${aside}-1`, 'utf8')).toBe('later');
  });

  it('leaves an unreadable state alone and keeps usage in memory', async () => {
    await mkdir(file, { recursive: true }); // a folder where the file should be: EISDIR
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger });
    expect(store.file).toBeUndefined();
    expect(lines.warn).toHaveLength(1);
    expect(lines.warn[0]).toMatch(
      new RegExp(`^cannot read usage state ${file} \\(.*EISDIR.*\\); usage is kept in memory only`),
    );
    expect(store.increment(NOV)).toBe(1);
    await store.close();
    await expect(readdir(file)).resolves.toEqual([]);
  });

  it('removes temporary files a killed write left behind', async () => {
    await mkdir(join(dir, '.mockapi'));
    const leftover = join(dir, '.mockapi', '.state.json.mockapi-tmp-999999999-abcd1234');
    await writeFile(leftover, 'half');
    await createUsageStore({ file, clock: () => NOV });
    await expect(readdir(join(dir, '.mockapi'))).resolves.toEqual([]);
  });

  it('writes within the flush interval without being asked, with one timer for many changes', async () => {
    const writes: string[] = [];
    const write: WriteFn = async (_file, data) => {
      writes.push(data);
    };
    const store = await createUsageStore({ file, clock: () => NOV, flushIntervalMs: 20, write });
    for (let i = 0; i < 1_000; i++) store.increment(NOV);
    await vi.waitFor(() => expect(writes).toEqual([stateText('2026-11', 1_000)]), { timeout: 2_000, interval: 5 });
    store.increment(NOV);
    await vi.waitFor(() => expect(writes).toHaveLength(2), { timeout: 2_000, interval: 5 });
    expect(writes[1]).toBe(stateText('2026-11', 1_001));
    await store.close();
    expect(writes).toHaveLength(2); // nothing changed since: close() writes nothing
  });

  it('writes the real file within the default second', async () => {
    const store = await createUsageStore({ file, clock: () => NOV });
    store.increment(NOV);
    await vi.waitFor(async () => expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 1)), {
      timeout: 3_000,
      interval: 20,
    });
    await store.close();
  });

  it('runs one write at a time, the latest count last', async () => {
    const started: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const write: WriteFn = async (_file, data) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      started.push(data);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
    };
    const store = await createUsageStore({ file, clock: () => NOV, flushIntervalMs: 60_000, write });
    store.increment(NOV);
    const first = store.flush();
    await vi.waitFor(() => expect(started).toHaveLength(1), { interval: 1 }); // the first write is under way
    store.increment(NOV);
    const second = store.flush();
    const third = store.flush();
    await Promise.all([first, second, third]);
    expect(maxInFlight).toBe(1);
    expect(started).toEqual([stateText('2026-11', 1), stateText('2026-11', 2)]);
  });

  it('on a write error warns once per distinct error, keeps counting and retries', async () => {
    let failure: NodeJS.ErrnoException | undefined = Object.assign(new Error('ENOSPC: no space left on device'), {
      code: 'ENOSPC',
    });
    const written: string[] = [];
    const write: WriteFn = async (_file, data) => {
      if (failure) throw failure;
      written.push(data);
    };
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger, flushIntervalMs: 60_000, write });
    for (let i = 1; i <= 3; i++) {
      store.increment(NOV);
      await store.flush();
    }
    expect(lines.warn).toEqual([
      `cannot write usage state ${file} (ENOSPC: no space left on device); counting goes on in memory and the write is retried`,
    ]);
    failure = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
    await store.flush(); // still pending: retried without a new change
    expect(lines.warn).toHaveLength(2);
    expect(lines.warn[1]).toContain('EROFS');
    failure = undefined;
    expect(store.increment(NOV)).toBe(4);
    await store.close();
    expect(written).toEqual([stateText('2026-11', 4)]);
    expect(lines.info).toEqual([`usage state ${file} is written again`]);
  });

  it('keeps serving from memory when the folder is read-only, and writes once it is writable again', async (ctx) => {
    if (!(await readOnlyFoldersWork(dir))) ctx.skip();
    await mkdir(join(dir, '.mockapi'));
    await writeFile(join(dir, '.mockapi', '.gitignore'), '*\n');
    await writeFile(file, stateText('2026-11', 5));
    await chmod(join(dir, '.mockapi'), 0o555);
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger, flushIntervalMs: 60_000 });
    expect(store.increment(NOV)).toBe(6);
    await store.flush();
    expect(store.increment(NOV)).toBe(7);
    await store.flush();
    expect(lines.warn).toHaveLength(1);
    expect(lines.warn[0]).toMatch(/^cannot write usage state .*EACCES/);
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 5));
    await chmod(join(dir, '.mockapi'), 0o755);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 7));
  });

  it('leaves a corrupt file it cannot move aside untouched and keeps usage in memory', async (ctx) => {
    if (!(await readOnlyFoldersWork(dir))) ctx.skip();
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, 'garbage');
    await chmod(join(dir, '.mockapi'), 0o555);
    const { logger, lines } = collectingLogger();
    const store = await createUsageStore({ file, clock: () => NOV, logger });
    expect(store.file).toBeUndefined();
    expect(lines.warn[0]).toMatch(
      /is corrupt \(not valid JSON\) and could not be moved aside \(.*EACCES.*\); usage is kept in memory only/,
    );
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe('garbage');
  });

  it('reset() zeroes this month and is written', async () => {
    await mkdir(join(dir, '.mockapi'));
    await writeFile(file, stateText('2026-11', 8));
    const store = await createUsageStore({ file, clock: () => NOV });
    store.reset(NOV);
    expect(store.count(NOV)).toBe(0);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 0));
  });

  it('a custom --state file gets its folder created, without a .gitignore', async () => {
    const custom = join(dir, 'var', 'usage.json');
    const store = await createUsageStore({ file: custom, clock: () => DEC });
    store.increment(DEC);
    await store.close();
    expect(await readFile(custom, 'utf8')).toBe(stateText('2026-12', 1));
    await expect(readdir(join(dir, 'var'))).resolves.toEqual(['usage.json']);
  });
});

describe('a change made to the file by someone else (mockapi usage --reset, an edit)', () => {
  /** What `mockapi usage --reset` does: an atomic write of this month's 0. */
  const outsideWrite = (month: string, requests: number) => writeStateFile(file, { month, requests });

  /** A store on `file` that has counted and written `count` requests in November. */
  let now = NOV;
  beforeEach(() => {
    now = NOV;
  });

  async function storeThatWrote(count: number, logger?: Logger): Promise<UsageStore> {
    const store = await createUsageStore({ file, clock: () => now, logger, flushIntervalMs: 60_000 });
    for (let i = 0; i < count; i++) store.increment(NOV);
    await store.flush();
    return store;
  }

  it('reconcile() takes its count, and the next write goes on from there', async () => {
    const { logger, lines } = collectingLogger();
    const store = await storeThatWrote(5, logger);
    await outsideWrite('2026-11', 0);
    await store.reconcile();
    expect(store.count(NOV)).toBe(0);
    expect(lines.info).toEqual([`usage state ${file} was changed outside this server; counting from 0 for 2026-11`]);
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 1));
  });

  it('is never written over: flush re-reads the file first, and a reset wins over the unwritten counts admitted before it', async () => {
    const store = await storeThatWrote(5);
    store.increment(NOV);
    store.increment(NOV);
    await resetStateFile(file, NOV + 1); // what `mockapi usage --reset` does
    store.increment(NOV + 2); // admitted after the reset: counts
    await store.flush();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 1));
    expect(store.count(NOV + 2)).toBe(1);
    await store.close();
  });

  it("its own writes are not outside changes; an earlier month's count restarts this month at 0", async () => {
    const { logger, lines } = collectingLogger();
    const store = await storeThatWrote(3, logger);
    await store.reconcile();
    expect(store.count(NOV)).toBe(3);
    expect(lines.info).toEqual([]);
    await outsideWrite('2026-10', 99);
    await store.reconcile();
    expect(store.count(NOV)).toBe(0);
    await store.flush();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 0));
    // A later month than the store has seen, once its clock is in it too (the month turned while it
    // was idle), is taken as it is.
    now = DEC;
    await outsideWrite('2026-12', 7);
    await store.reconcile();
    expect(store.count(DEC)).toBe(7);
    await store.close();
  });

  it("a later month than the clock's, written while it runs, is set aside and this server's count written again", async () => {
    const { logger, lines } = collectingLogger();
    const store = await storeThatWrote(2, logger);
    await outsideWrite('2027-03', 7);
    await store.reconcile();
    expect(store.count(NOV)).toBe(2);
    const aside = `${file}.later-month-2026-11-15T12-00-00-000Z`;
    expect(lines.warn).toEqual([
      `usage state ${file} holds 2027-03 (7 requests), a later month than the server's clock (2026-11); moved it to ${aside} and counting goes on in 2026-11`,
    ]);
    expect(await readFile(aside, 'utf8')).toBe(stateText('2027-03', 7));
    store.increment(NOV);
    await store.flush();
    expect(store.count(NOV)).toBe(3);
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 3));
    await store.close();
  });

  it('a corrupt file is not a count: it is set aside with a warning, and the count is written again', async () => {
    const { logger, lines } = collectingLogger();
    const store = await storeThatWrote(4, logger);
    await writeFile(file, '{ not json');
    await store.reconcile();
    expect(store.count(NOV)).toBe(4);
    const aside = `${file}.corrupt-2026-11-15T12-00-00-000Z`;
    expect(lines.warn).toEqual([
      `usage state ${file} became corrupt (not valid JSON); moved it to ${aside} and kept counting from 4`,
    ]);
    expect(await readFile(aside, 'utf8')).toBe('{ not json');
    await store.flush(); // nothing new was counted, but the set-aside count is written again
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 4));
    await store.close();
  });

  it('a deleted file is not a count: the server keeps its own and writes it again', async () => {
    const store = await storeThatWrote(4);
    await rm(file);
    await store.reconcile();
    store.increment(NOV);
    await store.close();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 5));
  });
});

describe('createMemoryUsageStore', () => {
  it('counts per month and never touches the disk', async () => {
    const store = createMemoryUsageStore();
    expect(store.file).toBeUndefined();
    expect(store.count(NOV)).toBe(0);
    store.increment(NOV);
    store.increment(NOV);
    expect(store.count(NOV)).toBe(2);
    expect(store.count(DEC)).toBe(0);
    await store.flush();
    await store.close();
  });
});

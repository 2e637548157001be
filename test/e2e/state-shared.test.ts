// Several servers sharing one usage state file (SPEC §5.4): no request any of them counted is lost,
// and `mockapi usage --reset` still zeroes it. Stores on one real file, with fake clocks.
import { beforeEach, describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resetStateFile, writeStateFile } from '../../src/state/state-file.js';
import { createUsageStore, type UsageStore } from '../../src/state/usage-store.js';
import type { Logger } from '../../src/logger.js';
import { useTempDir } from '../helpers/cli.js';

const NOV = Date.parse('2026-11-15T12:00:00Z');
const stateText = (month: string, requests: number) =>
  `${JSON.stringify({ version: 1, usage: { month, requests } })}\n`;

const temp = useTempDir('mockapi-shared-', { each: true });
let dir: string;
let file: string;

beforeEach(() => {
  dir = temp.path;
  file = join(dir, '.mockapi', 'state.json');
});

/** A store on the shared file that only writes when told (`flush`), with its own clock. */
async function server(logger?: Logger, now = () => NOV): Promise<UsageStore> {
  return createUsageStore({ file, clock: now, logger, flushIntervalMs: 60_000 });
}

function count(store: UsageStore, n: number, at = NOV): void {
  for (let i = 0; i < n; i++) store.increment(at);
}

const fileRequests = async () =>
  (JSON.parse(await readFile(file, 'utf8')) as { usage: { requests: number } }).usage.requests;

/** A seeded random source (mulberry32), so a failing interleaving can be replayed. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('stores sharing one state file', () => {
  it('each adds what it counted to what the others wrote: the file holds the sum', async () => {
    const a = await server();
    const b = await server();
    count(a, 3);
    count(b, 5);
    await a.flush();
    await b.flush();
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 8));
    count(a, 2);
    await a.flush();
    expect(await fileRequests()).toBe(10);
    // Each store's count is the file's total as it last read it plus its own unwritten requests.
    expect(a.count(NOV)).toBe(10);
    expect(b.count(NOV)).toBe(8);
    b.increment(NOV);
    expect(b.count(NOV)).toBe(9);
    await b.reconcile();
    expect(b.count(NOV)).toBe(11); // 10 in the file + its 1 pending
    await b.close();
    await a.close();
    expect(await fileRequests()).toBe(11);
  });

  it('loses nothing over many random interleavings of counts, flushes and re-reads by three stores', async () => {
    for (let round = 0; round < 20; round++) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
      const random = seeded(round + 1);
      const stores = [await server(), await server(), await server()];
      let admitted = 0;
      const inFlight: Promise<void>[] = [];
      for (let step = 0; step < 60; step++) {
        const store = stores[Math.floor(random() * stores.length)]!;
        const action = random();
        if (action < 0.6) {
          const n = 1 + Math.floor(random() * 20);
          count(store, n);
          admitted += n;
        } else if (action < 0.85) {
          inFlight.push(store.flush()); // not awaited: flushes of different stores overlap
        } else {
          inFlight.push(store.reconcile());
        }
      }
      await Promise.all(inFlight);
      await Promise.all(stores.map((s) => s.close()));
      expect(await fileRequests(), `round ${round}`).toBe(admitted);
    }
  });

  it('flushes of several stores at the same moment never interleave (the lock), and leave no lock behind', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => server()));
    let admitted = 0;
    for (let round = 0; round < 25; round++) {
      stores.forEach((s, i) => count(s, i + 1));
      admitted += 1 + 2 + 3 + 4;
      await Promise.all(stores.map((s) => s.flush()));
    }
    expect(await fileRequests()).toBe(admitted);
    expect((await readdir(join(dir, '.mockapi'))).sort()).toEqual(['.gitignore', 'state.json']);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('a reset drops what each store admitted before it and had not written, and keeps what came after', async () => {
    let aNow = NOV;
    let bNow = NOV;
    const a = await server(undefined, () => aNow);
    const b = await server(undefined, () => bNow);
    count(a, 3, NOV);
    await a.flush();
    count(a, 4, NOV + 10); // not written when the reset comes
    count(b, 5, NOV + 20); // not written either
    expect(await fileRequests()).toBe(3);

    await resetStateFile(file, NOV + 100);
    expect(await readFile(file, 'utf8')).toBe(stateText('2026-11', 0)); // the format stays as SPEC §5.4 shows it

    aNow = bNow = NOV + 200;
    count(b, 2, NOV + 200); // after the reset, before b has seen it
    count(a, 1, NOV + 300);
    await b.flush();
    expect(b.count(NOV + 300)).toBe(2);
    await a.flush();
    expect(await fileRequests()).toBe(3);
    expect(a.count(NOV + 300)).toBe(3);
    await b.reconcile();
    expect(b.count(NOV + 300)).toBe(3);
    await a.close();
    await b.close();
    expect(await fileRequests()).toBe(3);
  });

  it('another store writing after the reset does not hide it from a store that has not looked yet', async () => {
    const a = await server();
    const b = await server();
    count(a, 10, NOV);
    count(b, 10, NOV);
    await a.flush();
    await b.flush();
    count(a, 7, NOV + 1); // unwritten at the reset
    await resetStateFile(file, NOV + 50);
    count(b, 30, NOV + 60); // b writes on top of the reset: the file now holds more than a last saw
    await b.flush();
    expect(await fileRequests()).toBe(30);
    await a.flush();
    expect(await fileRequests()).toBe(30); // a's 7 were admitted before the reset
    await a.close();
    await b.close();
  });

  it('two resets in a row are both seen, even at the same millisecond', async () => {
    const a = await server();
    count(a, 2, NOV);
    await a.flush();
    await resetStateFile(file, NOV + 5);
    await a.reconcile();
    count(a, 4, NOV + 5);
    await a.flush();
    expect(await fileRequests()).toBe(4);
    count(a, 1, NOV + 5);
    await resetStateFile(file, NOV + 5); // same time as the first: still a new one
    await a.flush();
    expect(await fileRequests()).toBe(0);
    await a.close();
  });

  it('an edit (a new modification time) is taken like a reset to the number written', async () => {
    const { logger, lines } = collectingLogger();
    const a = await server(logger);
    count(a, 5, NOV);
    await a.flush();
    count(a, 2, NOV + 10);
    await writeFile(file, stateText('2026-11', 100));
    await utimes(file, new Date(), new Date(NOV + 20));
    count(a, 1, NOV + 30);
    await a.flush();
    expect(await fileRequests()).toBe(101);
    expect(lines.info).toEqual([`usage state ${file} was changed outside this server; counting from 101 for 2026-11`]);
    await a.close();
  });

  it('keeps the time the count was set when it adds, and a new month starts at its first millisecond', async () => {
    const a = await server();
    count(a, 1, NOV);
    await a.flush();
    expect(Math.floor((await stat(file)).mtimeMs)).toBe(Date.parse('2026-11-01T00:00:00Z'));
    await resetStateFile(file, NOV + 1234);
    count(a, 1, NOV + 2000);
    await a.flush();
    expect(Math.floor((await stat(file)).mtimeMs)).toBe(NOV + 1234);
    await a.close();
  });

  it('a file deleted meanwhile is written again with the total this store knew plus its own', async () => {
    const a = await server();
    const b = await server();
    count(a, 4);
    await a.flush();
    await b.reconcile();
    await rm(file);
    count(b, 1);
    await b.flush();
    expect(await fileRequests()).toBe(5);
    await a.close();
    await b.close();
  });

  it('an old file written by a plain write (any time) loads and is added to', async () => {
    await mkdir(join(dir, '.mockapi'));
    await writeStateFile(file, { month: '2026-11', requests: 40 });
    const a = await server();
    const b = await server();
    count(a, 1);
    count(b, 1);
    await a.close();
    await b.close();
    expect(await fileRequests()).toBe(42);
  });
});

function collectingLogger() {
  const lines = { info: [] as string[], warn: [] as string[] };
  const logger: Logger = {
    info: (m) => lines.info.push(m),
    warn: (m) => lines.warn.push(m),
    error: (m) => lines.warn.push(m),
  };
  return { logger, lines };
}

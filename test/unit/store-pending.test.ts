import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  keepStorePending,
  parseStorePending,
  storePendingFile,
  takeStorePending,
} from '../../src/state/store-pending.js';

const NOV = Date.parse('2026-11-15T12:00:00Z');
const STORE = 'redis://127.0.0.1:6379';
let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mockapi-store-pending-'));
  file = storePendingFile(join(dir, '.mockapi', 'state.json'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('the requests kept for a shared store that was away at stop', () => {
  it('lives beside the state file', () => {
    expect(file).toBe(join(dir, '.mockapi', 'store-pending.json'));
  });

  it('adds to what other servers kept, and a take removes only its own store and project', async () => {
    await keepStorePending(file, STORE, 'shop', new Map([['2026-11', 5]]), NOV);
    await keepStorePending(
      file,
      STORE,
      'shop',
      new Map([
        ['2026-11', 2],
        ['2026-10', 1],
      ]),
      NOV,
    );
    await keepStorePending(file, STORE, 'other', new Map([['2026-11', 7]]), NOV);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      pending: [
        { store: STORE, project: 'shop', month: '2026-11', requests: 7 },
        { store: STORE, project: 'shop', month: '2026-10', requests: 1 },
        { store: STORE, project: 'other', month: '2026-11', requests: 7 },
      ],
    });
    expect(await takeStorePending(file, STORE, 'shop')).toEqual(
      new Map([
        ['2026-11', 7],
        ['2026-10', 1],
      ]),
    );
    expect(await takeStorePending(file, STORE, 'shop')).toEqual(new Map());
    expect(await takeStorePending(file, 'redis://elsewhere:6379', 'other')).toEqual(new Map());
    expect(await takeStorePending(file, STORE, 'other')).toEqual(new Map([['2026-11', 7]]));
    expect((await readdir(join(dir, '.mockapi'))).filter((f) => f.endsWith('.json'))).toEqual([]); // the last take removes the file
  });

  it('a missing file is nothing kept, and taking from it creates no folder', async () => {
    expect(await takeStorePending(file, STORE, 'shop')).toEqual(new Map());
    expect(await readdir(dir)).toEqual([]);
  });

  it('a file that is not one is left alone by a take, and set aside by a keep', async () => {
    await keepStorePending(file, STORE, 'shop', new Map([['2026-11', 1]]), NOV);
    await writeFile(file, '{"version":1,"pending":[{"store":1}]}');
    expect(await takeStorePending(file, STORE, 'shop')).toEqual({
      corrupt: 'an entry is not {store, project, month, requests}: {"store":1}',
    });
    const aside = await keepStorePending(file, STORE, 'shop', new Map([['2026-11', 3]]), NOV);
    expect(aside).toBe(`${file}.corrupt-2026-11-15T12-00-00-000Z`);
    expect(await readFile(aside!, 'utf8')).toBe('{"version":1,"pending":[{"store":1}]}');
    expect(await takeStorePending(file, STORE, 'shop')).toEqual(new Map([['2026-11', 3]]));
  });

  it.each([
    { text: '', expected: 'not valid JSON' },
    { text: '{"pending":[]}', expected: 'not a version 1 object' },
    { text: '{"version":1}', expected: '"pending" is not a list' },
    {
      text: '{"version":1,"pending":[{"store":"s","project":"p","month":"2026-11","requests":0}]}',
      expected: expect.stringMatching(/^an entry is not/),
    },
    { text: '{"version":1,"pending":[]}', expected: [] },
  ])('parses $text', ({ text, expected }) => {
    expect(parseStorePending(text)).toEqual(expected);
  });
});

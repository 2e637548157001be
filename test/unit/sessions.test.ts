// The parts of src/sessions/ with no server: session ids, the baggage entry (one bounded pass over
// any header), and the registry (sessions.max, sessions.ttl on a fake clock, keys made per session).
import { afterEach, describe, expect, test, vi } from 'vitest';
import { baggageSession } from '../../src/sessions/baggage.js';
import { newSessionId, sessionIdProblem } from '../../src/sessions/ids.js';
import { createSessionRegistry } from '../../src/sessions/registry.js';
import { checkAuth } from '../../src/pipeline/auth.js';
import { compiled } from './fakes.js';
import { createRedactor } from '../../src/redact/redactor.js';

/** A registry of a fleet host over `backing` (a fake of the parts the test needs), on `c`'s config, its warnings to `warn`. */
function fleetRegistry(c: Awaited<ReturnType<typeof compiled>>, warn: (message: string) => void, backing: object) {
  return createSessionRegistry({
    shared: {
      runtime: { holder: { current: c } } as never,
      logger: { info() {}, warn() {}, error() {} } as never,
      clients: {} as never,
      clock: () => 0,
      virtualStart: undefined,
      clearStubs: () => 0,
    },
    config: () => c.config,
    dropped: () => {},
    busy: () => false,
    warn,
    backing: backing as never,
  });
}

describe('session ids', () => {
  test.each(['a', 'A-z_0.9', 'x'.repeat(64), '...', '.a', 'a..b'])('%j is one', (id) =>
    expect(sessionIdProblem(id)).toBeUndefined(),
  );
  test.each(['', '.', '..', 'x'.repeat(65), 'a/b', 'a b', 'a\u0000b', 'é', 'a%2Fb', 'a\nb'])('%j is not', (id) =>
    expect(sessionIdProblem(id)).toMatch(/^a session id is 1 to 64 of letters/),
  );
  test('a made id is one, and different each time', () => {
    const ids = new Set(Array.from({ length: 100 }, newSessionId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(sessionIdProblem(id)).toBeUndefined();
  });
});

describe('the baggage entry mockapi.session', () => {
  test.each([
    ['mockapi.session=a', 'a'],
    ['userId=alice,mockapi.session=s-1;ttl=5,other=x', 's-1'],
    ['  mockapi.session \t=\t s-2 ; p ', 's-2'],
    ['mockapi.session=a%2Db', 'a-b'],
    ['x=1, mockapi.session=first, mockapi.session=second', 'first'],
    ['mockapi.session=%zz', '%zz'],
    ['mockapi.session=', ''],
  ])('%j gives %j', (header, id) => expect(baggageSession(header)).toBe(id));

  test.each([
    undefined,
    '',
    'a=b',
    'mockapi.sessions=a',
    'xmockapi.session=a',
    'mockapi.session',
    ';mockapi.session=a',
    'k=mockapi.session=a',
  ])('%j names none', (header) => expect(baggageSession(header)).toBeUndefined());

  test('several baggage headers: the first that names one', () =>
    expect(baggageSession(['a=b', 'mockapi.session=c', 'mockapi.session=d'])).toBe('c'));

  test('a value too long to be an id comes back too long, never shortened into one', () => {
    expect(sessionIdProblem(baggageSession(`mockapi.session=${'%41'.repeat(200)}`)!)).toMatch(/65 characters/);
  });

  test('64 KiB and more: read through in one pass, whatever it holds', () => {
    for (const filler of ['k=v,', ',', 'mockapi.session', 'mockapi.session=;', '=']) {
      const header = filler.repeat(Math.ceil((64 * 1024) / filler.length));
      expect(() => baggageSession(header)).not.toThrow();
      expect(baggageSession(`${header},mockapi.session=end`)).toBe(filler === 'mockapi.session=;' ? '' : 'end');
    }
  });
});

describe('the registry', () => {
  afterEach(() => vi.useRealTimers());

  async function registry(sessions: Record<string, unknown> = {}) {
    const c = await compiled({ sessions, endpoints: [] });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const dropped: string[] = [];
    const made = createSessionRegistry({
      shared: {
        runtime: { holder: { current: c } } as never,
        logger: { info() {}, warn() {}, error() {} } as never,
        clients: {} as never,
        clock: () => now,
        virtualStart: undefined,
        clearStubs: () => 0,
      },
      config: () => c.config,
      now: () => now,
      dropped: (id) => void dropped.push(id),
      busy: (id) => id === 'busy',
    });
    return { made, dropped, tick: (ms: number) => (now += ms) };
  }

  test('at most sessions.max: enter and create refuse one more, until one is dropped', async () => {
    const { made } = await registry({ max: 2 });
    expect(made.enter('a')?.id).toBe('a');
    expect(made.create('b', false)).toMatchObject({ entry: { id: 'b' } });
    expect(made.enter('c')).toBeUndefined();
    expect(made.create('c', false)).toBe('full');
    expect(made.create('a', false)).toBe('exists');
    expect(made.enter('a')?.id).toBe('a'); // one that exists is entered still
    expect(made.drop('a')).toBe(true);
    expect(made.enter('c')?.id).toBe('c');
  });

  test('10,000 by default: the 10,001st is refused', async () => {
    const { made } = await registry();
    for (let i = 0; i < 10_000; i++) expect(made.enter(`s${i}`)).toBeDefined();
    expect(made.enter('one-more')).toBeUndefined();
    expect(made.size).toBe(10_000);
  });

  test('a session idle for sessions.ttl is dropped; one in use (a wait open) is kept', async () => {
    vi.useFakeTimers();
    const { made, dropped, tick } = await registry({ ttl: '1m' });
    made.enter('idle');
    made.enter('seen');
    made.enter('busy');
    tick(40_000);
    made.enter('seen');
    tick(30_000);
    vi.advanceTimersByTime(15_000);
    expect(dropped).toEqual(['idle']);
    expect(made.list().map((e) => e.id)).toEqual(['seen', 'busy']);
    tick(60_000);
    vi.advanceTimersByTime(15_000);
    expect(dropped).toEqual(['idle', 'seen']);
    made.close();
    expect(dropped).toEqual(['idle', 'seen', 'busy']);
  });

  test('a key made for a session names it; dropped with it', async () => {
    const { made } = await registry({ byKey: true });
    const created = await made.create('k', true);
    if (typeof created !== 'object') throw new Error('not made');
    expect(created.key).toMatch(/^mk_[A-Za-z0-9]{32}$/);
    expect(checkAuth({ 'x-api-key': created.key }, made.keys!)).toMatchObject({ name: 'k', index: 0 });
    expect(checkAuth({ 'x-api-key': 'mk_other' }, made.keys!)).toBe('invalid');
    expect(checkAuth({ 'x-api-key': created.key }, made.get('k')!.key!)).toBe('ok');
    made.drop('k');
    expect(made.keys).toBeUndefined();
  });

  test("a fleet's line about a session named as a key shows <redacted>, not the key", async () => {
    const KEY = 'mk_live_0123456789abcdef0123456789abcdef';
    const c = { ...(await compiled({ apiKey: KEY, endpoints: [] })), redactor: createRedactor([KEY]) };
    const warnings: string[] = [];
    const made = fleetRegistry(c, (message) => void warnings.push(message), {
      listen() {},
      entered: () => Promise.reject(new Error("the fleet's Redis gave no answer in time")),
      seen: async () => {},
      requests: async () => new Map(),
    });
    made.enter(KEY);
    await vi.waitFor(() => expect(warnings.length).toBe(1));
    expect(warnings).toEqual([
      "sessions: session <redacted> is this host's until the store is back (the fleet's Redis gave no answer in time)",
    ]);
    made.close();
  });

  test("a catch-up keeps a session made while its read of the fleet's list was on its way, and does not make again one dropped meanwhile", async () => {
    const c = await compiled({ apiKey: 'mk_catchup_000000000000000000000001', endpoints: [] });
    let events: { added(s: { id: string; created: number }): void; dropped(ids: string[]): void } | undefined;
    let answer: (list: { id: string; created: number }[]) => void = () => {};
    const made = fleetRegistry(c, () => {}, {
      listen: (e: typeof events) => void (events = e),
      list: () => new Promise((done) => (answer = done)),
      entered: async () => 'ok',
      seen: async () => {},
      requests: async () => new Map(),
    });
    events!.added({ id: 'gone', created: 1 });
    const catching = made.catchUp();
    // While the list is read: another host makes `late` and drops `gone`; the list, read before, says otherwise.
    events!.added({ id: 'late', created: 2 });
    events!.dropped(['gone']);
    answer([{ id: 'gone', created: 1 }]);
    await catching;
    expect(made.list().map((e) => e.id)).toEqual(['late']);
    made.close();
  });
});

import { describe, expect, it } from 'vitest';
import { createAdmitBatcher, MAX_BATCH, type AdmitReply } from '../../src/state/admit-batch.js';
import { createSettleBatcher } from '../../src/state/settle-batch.js';

/** A batcher whose turn ends when the test says, over a fake Redis that records each call. */
function setup(
  answer: (args: string[]) => Promise<unknown> = (args) =>
    Promise.resolve(Array.from({ length: Number(args[3]) * 5 }, (_, i) => i)),
) {
  const calls: { args: string[]; late: (reply: unknown) => void; keys: string[] }[] = [];
  let endTurn: (() => void) | undefined;
  const batcher = createAdmitBatcher(
    (args, late, keys) => {
      calls.push({ args, late, keys });
      return answer(args);
    },
    (flush) => (endTurn = flush),
  );
  return { batcher, calls, endTurn: () => endTurn?.() };
}

const limits = { rateLimit: { requests: 10, windowMs: 1000 }, monthlyQuota: 50 };

describe('the admissions of one turn', () => {
  it('are sent once the turn ends, as one call per set of limits, each request getting its own five numbers', async () => {
    const { batcher, calls, endTurn } = setup();
    const replies = [batcher.admit(limits), batcher.admit({}), batcher.admit(limits)];
    expect(calls).toHaveLength(0);
    endTurn();
    expect(calls.map((c) => c.args)).toEqual([
      ['10', '1000', '50', '2'],
      ['0', '0', '0', '1'],
    ]);
    expect(await Promise.all(replies)).toEqual([
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
  });

  it(`are split into calls of at most ${MAX_BATCH}`, async () => {
    const { batcher, calls, endTurn } = setup();
    const replies = Array.from({ length: MAX_BATCH + 3 }, () => batcher.admit(limits));
    endTurn();
    expect(calls.map((c) => c.args[3])).toEqual([String(MAX_BATCH), '3']);
    expect((await replies.at(-1))![0]).toBe(10);
  });

  it("all fail with the call, and a reply that comes after all reaches each request's late", async () => {
    const { batcher, calls, endTurn } = setup(() => Promise.reject(new Error('no answer within 3000 ms')));
    const late: AdmitReply[] = [];
    const replies = [batcher.admit(limits, (r) => late.push(r)), batcher.admit(limits, (r) => late.push(r))];
    endTurn();
    for (const reply of replies) await expect(reply).rejects.toThrow('no answer within 3000 ms');
    calls[0]!.late([0, 10, 9, 1, 0, 1, 10, 0, 1, 1]);
    expect(late).toEqual([
      [0, 10, 9, 1, 0],
      [1, 10, 0, 1, 1],
    ]);
  });

  it('fail when the reply does not have five numbers per request', async () => {
    const { batcher, endTurn } = setup(() => Promise.resolve([0, 1, 2]));
    const reply = batcher.admit(limits);
    endTurn();
    await expect(reply).rejects.toThrow('for 1 requests');
  });

  it('are sent at once by flush (before a close), and a new turn starts a new call', async () => {
    const { batcher, calls, endTurn } = setup();
    const first = batcher.admit(limits);
    batcher.flush();
    expect(calls).toHaveLength(1);
    await first;
    endTurn(); // the turn's own end finds nothing left
    expect(calls).toHaveLength(1);
    const second = batcher.admit(limits);
    endTurn();
    expect(calls).toHaveLength(2);
    await second;
  });

  it('through endpoint windows go in the same call: each endpoint once, with its keys, and the endpoint of each request', async () => {
    const { batcher, calls, endTurn } = setup();
    const search = { id: 'aaaa', window: 's:window', meta: 's:meta', requests: 3, windowMs: 60_000 };
    const orders = { id: 'bbbb', window: 'o:window', meta: 'o:meta', requests: 1, windowMs: 1000 };
    const replies = [
      batcher.admit(limits, undefined, search),
      batcher.admit(limits),
      batcher.admit(limits, undefined, orders),
      batcher.admit(limits, undefined, search),
    ];
    // The same endpoint with another window (a reload within the turn) goes in a call of its own.
    const reloaded = batcher.admit(limits, undefined, { ...search, requests: 5 });
    endTurn();
    expect(calls.map((c) => [c.args, c.keys])).toEqual([
      [
        ['10', '1000', '50', '4', '2', 'aaaa', '3', '60000', 'bbbb', '1', '1000', '1', '0', '2', '1'],
        ['s:window', 's:meta', 'o:window', 'o:meta'],
      ],
      [
        ['10', '1000', '50', '1', '1', 'aaaa', '5', '60000', '1'],
        ['s:window', 's:meta'],
      ],
    ]);
    expect(await Promise.all(replies)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
      [10, 11, 12, 13, 14],
      [15, 16, 17, 18, 19],
    ]);
    expect(await reloaded).toEqual([0, 1, 2, 3, 4]);
  });

  it(`through endpoint windows, split into calls of at most ${MAX_BATCH}, each call naming the endpoints of its own requests`, async () => {
    const { batcher, calls, endTurn } = setup();
    const endpoint = { id: 'aaaa', window: 'a:window', meta: 'a:meta', requests: 3, windowMs: 1000 };
    const replies = Array.from({ length: MAX_BATCH + 2 }, (_, i) =>
      batcher.admit(limits, undefined, i < MAX_BATCH ? undefined : endpoint),
    );
    endTurn();
    expect(calls.map((c) => [c.args, c.keys])).toEqual([
      [['10', '1000', '50', String(MAX_BATCH)], []],
      [
        ['10', '1000', '50', '2', '1', 'aaaa', '3', '1000', '1', '1'],
        ['a:window', 'a:meta'],
      ],
    ]);
    await Promise.all(replies);
  });

  it("with meters: each request's reserves and the audit cap in the same call; each reply its own numbers, and when and in which month it was counted", async () => {
    const meters = {
      signature: 'tokens/5',
      args: ['1', 'tokens', '5000000', '60000', 'w'],
      keys: ['t:list', 't:amounts', 't:meta', 'k:meters', 'k:audit'],
      count: 1,
      windows: [60_000],
      auditCap: 0,
    };
    // Five numbers a request, then the meter as the call found it (empty), the time and the month of the call.
    const { batcher, calls, endTurn } = setup((args) =>
      Promise.resolve(
        args.length > 4
          ? [0, 10, 9, 1, 0, 0, 10, 8, 1, 0, 0, 0, 1_767_225_600_000, '2026-01']
          : Array.from({ length: Number(args[3]) * 5 }, (_, i) => i),
      ),
    );
    const replies = [
      batcher.admit(limits, undefined, undefined, meters, [3_000_000]),
      batcher.admit(limits, undefined, undefined, meters),
      batcher.admit(limits),
    ];
    endTurn();
    expect(calls.map((c) => c.args)).toEqual([
      ['10', '1000', '50', '2', '0', '1', 'tokens', '5000000', '60000', 'w', '3000000', '-1', '0'],
      ['10', '1000', '50', '1'],
    ]);
    const [first, second, plain] = await Promise.all(replies);
    expect(plain).toEqual([0, 1, 2, 3, 4]);
    // The first request's reserve is in the meter after it, and the window resets a whole window later.
    expect([...first!]).toEqual([0, 10, 9, 1, 0, 0, 0, 3_000_000, 60_000]);
    expect([...second!]).toEqual([0, 10, 8, 1, 0, 0, 0, 3_000_000, 60_000]);
    expect([first!.countedAt, first!.month]).toEqual([1_767_225_600_000, '2026-01']);
  });

  it("with meters: a meter's refusal carries the meter and its wait; a refused request adds nothing to the meters", async () => {
    const meters = {
      signature: 'tokens/5+spend',
      args: ['2', 'tokens', '5000000', '60000', 'w', 'spend', '9000000', '0', 'm'],
      keys: ['t:list', 't:amounts', 't:meta', 's:list', 's:amounts', 's:meta', 'k:meters', 'k:audit'],
      count: 2,
      windows: [60_000, 0],
      auditCap: 0,
    };
    // Found: tokens 4 of 5 (resets in 30 s), spend 1 (resets in 86,400 s); the first request is
    // admitted, the second refused by tokens (3: its window) for 12 s, the third admitted.
    const reply = [0, 10, 9, 1, 0, 3, 10, 9, 1, 12, 1, 12_000, 0, 10, 8, 1, 0];
    const found = [4_000_000, 30_000, 1_000_000, 86_400_000];
    const { batcher, endTurn } = setup(() => Promise.resolve([...reply, ...found, 1_767_225_600_000, '2026-01']));
    const replies = [
      batcher.admit(limits, undefined, undefined, meters, [500_000, 2_000]),
      batcher.admit(limits, undefined, undefined, meters, [3_000_000, -1]),
      batcher.admit(limits, undefined, undefined, meters, [0, 1_000]),
    ];
    endTurn();
    const [first, second, third] = await Promise.all(replies);
    expect([...first!]).toEqual([0, 10, 9, 1, 0, 0, 0, 4_500_000, 30_000, 1_002_000, 86_400_000]);
    expect([...second!]).toEqual([3, 10, 9, 1, 12, 1, 12_000, 4_500_000, 30_000, 1_002_000, 86_400_000]);
    expect([...third!]).toEqual([0, 10, 8, 1, 0, 0, 0, 4_500_000, 30_000, 1_003_000, 86_400_000]);
  });

  it('with meters: a reply of another shape fails every request of the call', async () => {
    const meters = {
      signature: 'tokens/5',
      args: ['1', 'tokens', '5000000', '60000', 'w'],
      keys: ['t:list', 't:amounts', 't:meta', 'k:meters', 'k:audit'],
      count: 1,
      windows: [60_000],
      auditCap: 0,
    };
    // The old shape (a meter's two numbers after each request): one number too many for one request.
    const { batcher, endTurn } = setup(() => Promise.resolve([0, 10, 9, 1, 0, 0, 0, 7, 8, 0, 0, 1, '2026-01']));
    const reply = batcher.admit(limits, undefined, undefined, meters, [1]);
    endTurn();
    await expect(reply).rejects.toThrow(/the admit script answered/);
  });
});

describe('settles carried by an admission call of the same meters', () => {
  const tokens = {
    name: 'tokens',
    limit: 5_000_000,
    period: 'window',
    windowMs: 60_000,
    exhausted: 'quotaExceeded',
  } as const;
  const list = [tokens];
  const meterBatch = {
    signature: 'tokens/5',
    args: ['1', 'tokens', '5000000', '60000', 'w'],
    keys: ['t:list', 't:amounts', 't:meta', 'k:meters', 'k:audit'],
    count: 1,
    windows: [60_000],
    auditCap: 0,
  };
  /** Both batchers over one fake Redis, their turn ended by the test (settles first or admissions first). */
  function pair(order: 'settles first' | 'admissions first') {
    const admitCalls: string[][] = [];
    const settleCalls: string[][] = [];
    const flushes: Array<() => void> = [];
    const admissions = createAdmitBatcher(
      (args) => {
        admitCalls.push(args);
        return Promise.resolve([0, 10, 9, 1, 0, 1_000_000, 60_000, 1_767_225_600_000, '2026-01']);
      },
      (flush) => flushes.push(flush),
      (batch) => (batch === meterBatch ? settles.take(list) : undefined),
    );
    const settles = createSettleBatcher(
      (args) => {
        settleCalls.push(args);
        return Promise.resolve(1);
      },
      0,
      () => ['t:list', 't:amounts', 't:meta', 'k:audit'],
      { window: 'w', month: 'm', total: 't' },
      (meters, part) => meters === list && admissions.carry(meterBatch, part),
      (flush) => flushes.push(flush),
    );
    const endTurn = () => {
      const ready = flushes.splice(0);
      (order === 'settles first' ? ready.reverse() : ready).forEach((f) => f());
    };
    return { admissions, settles, admitCalls, settleCalls, endTurn };
  }

  for (const order of ['settles first', 'admissions first'] as const) {
    it(`go after the audit cap of that call, added up, and are done when it answers (${order})`, async () => {
      const { admissions, settles, admitCalls, settleCalls, endTurn } = pair(order);
      const admitted = admissions.admit(limits, undefined, undefined, meterBatch, [300]);
      const settled = [
        settles.settle(list, { at: 1_767_225_599_000, month: '2026-01', deltas: [-283] }),
        settles.settle(list, { at: 1_767_225_599_000, month: '2026-01', deltas: [-280] }),
      ];
      endTurn();
      expect(settleCalls).toEqual([]);
      expect(admitCalls).toEqual([
        [
          ...['10', '1000', '50', '1', '0', '1', 'tokens', '5000000', '60000', 'w', '300', '0'],
          ...['1', '1767225599000', '2026-01', '-563'],
        ],
      ]);
      await Promise.all([admitted, ...settled]);
    });
  }

  it('go in a settle call of their own when no admission of those meters is queued', async () => {
    const { admissions, settles, admitCalls, settleCalls, endTurn } = pair('settles first');
    const plain = admissions.admit(limits);
    const settled = settles.settle(list, { at: 1_767_225_599_000, month: '2026-01', deltas: [-283] });
    endTurn();
    expect(admitCalls).toEqual([['10', '1000', '50', '1']]);
    expect(settleCalls).toEqual([['1', 'tokens', 'w', '0', '1', '1767225599000', '2026-01', '-283']]);
    await settled;
    await expect(plain).rejects.toThrow(/the admit script answered/); // (the fake answers the metered shape)
  });

  it('fail with the admission call that carries them', async () => {
    const admissions = createAdmitBatcher(
      () => Promise.reject(new Error('no answer within 3000 ms')),
      () => undefined,
    );
    const failed: unknown[] = [];
    const reply = admissions.admit(limits, undefined, undefined, meterBatch, [300]);
    expect(
      admissions.carry(meterBatch, {
        count: 1,
        args: ['1', '2026-01', '5'],
        done: () => {},
        fail: (e) => failed.push(e),
      }),
    ).toBe(true);
    admissions.flush();
    await expect(reply).rejects.toThrow('no answer within 3000 ms');
    expect(failed).toEqual([new Error('no answer within 3000 ms')]);
  });
});

import { describe, expect, it } from 'vitest';
import { createAdmitBatcher, MAX_BATCH, type AdmitReply } from '../src/state/admit-batch.js';

/** A batcher whose turn ends when the test says, over a fake Redis that records each call. */
function setup(answer: (args: string[]) => Promise<unknown> = (args) => Promise.resolve(Array.from({ length: Number(args[3]) * 5 }, (_, i) => i))) {
  const calls: { args: string[]; late: (reply: unknown) => void }[] = [];
  let endTurn: (() => void) | undefined;
  const batcher = createAdmitBatcher(
    (args, late) => {
      calls.push({ args, late });
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
    expect(calls.map((c) => c.args)).toEqual([['10', '1000', '50', '2'], ['0', '0', '0', '1']]);
    expect(await Promise.all(replies)).toEqual([[0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]);
  });

  it(`are split into calls of at most ${MAX_BATCH}`, async () => {
    const { batcher, calls, endTurn } = setup();
    const replies = Array.from({ length: MAX_BATCH + 3 }, () => batcher.admit(limits));
    endTurn();
    expect(calls.map((c) => c.args[3])).toEqual([String(MAX_BATCH), '3']);
    expect((await replies.at(-1))![0]).toBe(10);
  });

  it('all fail with the call, and a reply that comes after all reaches each request\'s late', async () => {
    const { batcher, calls, endTurn } = setup(() => Promise.reject(new Error('no answer within 3000 ms')));
    const late: AdmitReply[] = [];
    const replies = [batcher.admit(limits, (r) => late.push(r)), batcher.admit(limits, (r) => late.push(r))];
    endTurn();
    for (const reply of replies) await expect(reply).rejects.toThrow('no answer within 3000 ms');
    calls[0]!.late([0, 10, 9, 1, 0, 1, 10, 0, 1, 1]);
    expect(late).toEqual([[0, 10, 9, 1, 0], [1, 10, 0, 1, 1]]);
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
});

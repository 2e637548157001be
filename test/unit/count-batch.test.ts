import { describe, expect, test } from 'vitest';
import { createCountBatcher, type CountTold } from '../../src/state/count-batch.js';

const SCRIPT = { sha: 'abc', source: 'return 1' };

/** A client that keeps each command's array as given (it encodes a command when it writes it) and is answered by hand. */
function fakeClient() {
  const sent: {
    args: string[];
    written?: string[];
    done(reply: unknown): void;
    fail(err: Error): void;
    late?: (r: unknown) => void;
  }[] = [];
  const send = (args: string[], late: (reply: unknown) => void): Promise<unknown> =>
    new Promise((done, fail) => sent.push({ args, done, fail, late }));
  return { sent, send };
}

function toldLog() {
  const log: [number, string, string?][] = [];
  const told: CountTold = (n, outcome, reason) => log.push(reason === undefined ? [n, outcome] : [n, outcome, reason]);
  return { log, told };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('count calls (state/count-batch.ts)', () => {
  test('the counts of one turn go in one call, its number raised until the turn ends; the next turn opens another', async () => {
    const { sent, send } = fakeClient();
    let endTurn: (() => void) | undefined;
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', (close) => (endTurn = close));
    const { log, told } = toldLog();
    for (let i = 0; i < 5; i++) batcher.count(told);
    expect(sent.map((c) => c.args)).toEqual([['EVALSHA', 'abc', '1', 'k:usage', '5']]);
    endTurn!();
    batcher.count(told);
    expect(sent.map((c) => c.args[4])).toEqual(['5', '1']);
    sent[0]!.done(5);
    sent[1]!.done(1);
    await tick();
    expect(log).toEqual([
      [5, 'counted'],
      [1, 'counted'],
    ]);
  });

  test('another command closes the open call: later counts go in a call after it', () => {
    const { sent, send } = fakeClient();
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', () => {});
    const { told } = toldLog();
    batcher.count(told);
    batcher.closeBefore(sent[0]!.args); // its own sending does not close it
    batcher.count(told);
    batcher.closeBefore(['EVALSHA', 'reset', '1', 'k:usage']);
    batcher.count(told);
    expect(sent.map((c) => c.args[4])).toEqual(['2', '1']);
  });

  test('counts added after the client wrote the call are counted in another; a refused call by hash goes again by source', async () => {
    const { sent, send } = fakeClient();
    const closers: (() => void)[] = [];
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', (close) => closers.push(close));
    const { log, told } = toldLog();
    batcher.count(told);
    batcher.count(told); // the client wrote "2"…
    batcher.count(told); // …and this one came after
    closers.forEach((close) => close()); // the turn ended before the reply came
    sent[0]!.done(2);
    await tick();
    expect(log).toEqual([[2, 'counted']]);
    expect(sent[1]!.args).toEqual(['EVALSHA', 'abc', '1', 'k:usage', '1']);
    sent[1]!.fail(new Error('NOSCRIPT No matching script. Please use EVAL.'));
    await tick();
    expect(sent[2]!.args).toEqual(['EVAL', 'return 1', '1', 'k:usage', '1']);
    sent[2]!.done(1);
    await tick();
    expect(log).toEqual([
      [2, 'counted'],
      [1, 'counted'],
    ]);
  });

  test("the client reading a call's count to write it closes the call: a count after goes in another", () => {
    const { sent, send } = fakeClient();
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', () => {});
    const { told } = toldLog();
    batcher.count(told);
    batcher.count(told);
    expect(sent[0]!.args[4]).toBe('2'); // what encoding the command does
    batcher.count(told);
    expect(sent.map((c) => [...c.args])).toEqual([
      ['EVALSHA', 'abc', '1', 'k:usage', '2'],
      ['EVALSHA', 'abc', '1', 'k:usage', '1'],
    ]);
  });

  test('a reply while the call is still open (its turn not ended) closes it: the counts it did not carry go in one more call, once', async () => {
    const { sent, send } = fakeClient();
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', () => {}); // a turn that never ends
    const { log, told } = toldLog();
    batcher.count(told);
    batcher.count(told);
    sent[0]!.done(1); // Redis got 1: the second was raised after the client wrote the call
    await tick();
    batcher.count(told); // after the reply: not into the answered call
    expect(sent.map((c) => c.args[4])).toEqual(['2', '2']);
    sent[1]!.done(2);
    await tick();
    expect(log).toEqual([
      [1, 'counted'],
      [2, 'counted'],
    ]);
  });

  test('a call that fails tells how many it held; one Redis ran after all tells how many it counted', async () => {
    const { sent, send } = fakeClient();
    const batcher = createCountBatcher(send, SCRIPT, 'k:usage', () => {});
    const { log, told } = toldLog();
    for (let i = 0; i < 3; i++) batcher.count(told);
    sent[0]!.fail(new Error('no answer within 300 ms'));
    await tick();
    sent[0]!.late!(3);
    expect(log).toEqual([
      [3, 'failed', 'no answer within 300 ms'],
      [3, 'late'],
    ]);
  });
});

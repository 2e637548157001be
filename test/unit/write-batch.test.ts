import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { endSoon, flushWrites, MAX_HELD_ANSWERS } from '../../src/http/write-batch.js';

/** A response that records when it is ended. */
function fakeResponse(ended: number[], id: number): ServerResponse {
  return { end: () => ended.push(id), destroy: () => {} } as unknown as ServerResponse;
}

const nextTurn = () => new Promise<void>((done) => setImmediate(done));

// Answers are held until the end of the loop turn (src/http/write-batch.ts); a turn that makes many
// answers (many connections) must not hold the first ones until the last is made.
describe('answers held back in one turn', () => {
  it(`are written, in order, as the next one comes once ${MAX_HELD_ANSWERS} are held; the rest at the end of the turn`, async () => {
    const ended: number[] = [];
    const count = MAX_HELD_ANSWERS * 2 + 5;
    const seen: number[] = [];
    for (let i = 0; i < count; i++) {
      endSoon(fakeResponse(ended, i), Buffer.from('{}'));
      seen.push(ended.length);
    }
    // Queueing the 33rd wrote the 32 held before it; queueing the 65th, the next 32.
    expect(seen[MAX_HELD_ANSWERS - 1]).toBe(0);
    expect(seen[MAX_HELD_ANSWERS]).toBe(MAX_HELD_ANSWERS);
    expect(seen[2 * MAX_HELD_ANSWERS - 1]).toBe(MAX_HELD_ANSWERS);
    expect(seen[2 * MAX_HELD_ANSWERS]).toBe(2 * MAX_HELD_ANSWERS);
    expect(ended).toHaveLength(2 * MAX_HELD_ANSWERS);
    await nextTurn();
    expect(ended).toEqual(Array.from({ length: count }, (_, i) => i));
  });

  it('fewer than the limit wait for the end of the turn (or an explicit flush)', async () => {
    const ended: number[] = [];
    endSoon(fakeResponse(ended, 1), Buffer.from('{}'));
    endSoon(fakeResponse(ended, 2), Buffer.from('{}'));
    expect(ended).toEqual([]);
    flushWrites();
    expect(ended).toEqual([1, 2]);
    endSoon(fakeResponse(ended, 3), Buffer.from('{}'));
    await nextTurn();
    expect(ended).toEqual([1, 2, 3]);
  });
});

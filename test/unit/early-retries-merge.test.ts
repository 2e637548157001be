// SPEC §10 with §12: the trackers of `serve --workers` workers — one gives a Retry-After, the others
// hear of it — add up to what one process would count.
import { describe, expect, test } from 'vitest';
import { createClientTracker, mergeClients, summarize } from '../../src/control/early-retries.js';

describe('trackers of several workers', () => {
  test('a Retry-After heard from another worker notes an early retry here and counts nothing twice', () => {
    const a = createClientTracker();
    const b = createClientTracker();
    a.gave('c', '10', 1000);
    b.heard('c', '10', 1000);
    expect(b.arrive('c', 2000)).toBe('early retry: 9000 ms before Retry-After');
    expect(a.arrive('c', 5000)).toBe('early retry: 6000 ms before Retry-After');
    b.gave('c', '10', 5000);
    a.heard('c', '10', 5000);
    expect(a.arrive('c', 16000)).toBeUndefined(); // waited as told
    expect(mergeClients([a.list(), b.list()])).toEqual([
      { client: 'c', requests: 4, retryAfterGiven: 2, earlyRetries: 2, worstEarlyMs: 9000 },
    ]);
    expect(mergeClients([b.list(), a.list()])).toEqual(mergeClients([a.list(), b.list()]));
  });

  test('a client only heard of is listed with nothing counted, and the merged list is ordered by client', () => {
    const a = createClientTracker();
    const b = createClientTracker();
    a.gave('z', '1', 0);
    b.heard('z', '1', 0);
    b.gave('m', '1', 0);
    a.heard('m', '1', 0);
    expect(b.list()).toEqual([
      { client: 'z', requests: 0, retryAfterGiven: 0, earlyRetries: 0, worstEarlyMs: 0 },
      { client: 'm', requests: 1, retryAfterGiven: 1, earlyRetries: 0, worstEarlyMs: 0 },
    ]);
    const merged = mergeClients([a.list(), b.list()]);
    expect(merged.map((c) => [c.client, c.requests, c.retryAfterGiven])).toEqual([
      ['m', 1, 1],
      ['z', 1, 1],
    ]);
    expect(summarize(merged)).toBe('Retry-After: every client waited as told (2 given one)');
    expect(summarize([])).toBeUndefined();
  });
});

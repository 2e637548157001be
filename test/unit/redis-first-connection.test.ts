// A store's first connection at start (src/state/redis-client.ts): a refusal ends the wait at once;
// only a store that gives no answer at all is waited for, and no longer than the wait.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { firstConnection, type Client } from '../../src/state/redis-client.js';

/** The part of a client firstConnection uses: its events. */
function fakeClient(): Client & EventEmitter {
  return new EventEmitter() as unknown as Client & EventEmitter;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('firstConnection', () => {
  test('false at the first connection error, no time having passed; its listener removed', async () => {
    vi.useFakeTimers();
    const client = fakeClient();
    const waiting = firstConnection(client, new Promise(() => {}), 2000);
    expect(client.listenerCount('error')).toBe(1);
    client.emit('error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect(await waiting).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(client.listenerCount('error')).toBe(0);
  });

  test('true once connected', async () => {
    vi.useFakeTimers();
    const client = fakeClient();
    expect(await firstConnection(client, Promise.resolve(), 2000)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(client.listenerCount('error')).toBe(0);
  });

  test('false when the connection fails, and when nothing answers within the wait', async () => {
    vi.useFakeTimers();
    expect(await firstConnection(fakeClient(), Promise.reject(new Error('gone')), 2000)).toBe(false);
    const client = fakeClient();
    let settled: boolean | undefined;
    void firstConnection(client, new Promise(() => {}), 2000).then((v) => (settled = v));
    await vi.advanceTimersByTimeAsync(1999);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(false);
    expect(client.listenerCount('error')).toBe(0);
  });
});

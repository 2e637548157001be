// The delivery log is bounded like the journal: by count (server.journal) and by the bytes of the
// bodies it keeps, oldest out first, the newest always kept, and what left it can be collected.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { DeliveryLog, type Delivery } from '../../src/webhooks/log.js';

const delivery = (n: number, body: string): Delivery => ({
  id: `whd_${n}`,
  event: 'e',
  eventId: `evt_${n}`,
  target: 't',
  url: 'http://127.0.0.1:1/h',
  endpoint: null,
  status: 'delivered',
  attempts: [],
  nextAttempt: null,
  headers: {},
  body,
  chaos: [],
  error: null,
});

/** Bodies counted by their length, as written. */
const bodyChars = (d: Delivery): number => d.body.length;

describe('DeliveryLog', () => {
  test('keeps at most capacity deliveries, oldest out first', () => {
    const log = new DeliveryLog<Delivery>(() => 3, undefined, bodyChars);
    for (let n = 1; n <= 5; n++) log.add(delivery(n, '{}'));
    expect(log.list().map((d) => d.id)).toEqual(['whd_3', 'whd_4', 'whd_5']);
    expect(log.find('whd_2')).toBeUndefined();
  });

  test('keeps at most maxChars of bodies, and always the newest, however large', () => {
    const log = new DeliveryLog<Delivery>(() => 1000, 100, bodyChars);
    for (let n = 1; n <= 10; n++) log.add(delivery(n, 'x'.repeat(30)));
    expect(log.list().map((d) => d.id)).toEqual(['whd_8', 'whd_9', 'whd_10']);
    log.add(delivery(11, 'y'.repeat(500)));
    expect(log.list().map((d) => d.id)).toEqual(['whd_11']);
    log.add(delivery(12, 'z'));
    expect(log.list().map((d) => d.id)).toEqual(['whd_12']);
    log.clear();
    log.add(delivery(13, 'x'.repeat(100)));
    expect(log.list().map((d) => d.id)).toEqual(['whd_13']);
  });

  test('lets go of what left it: a dropped delivery can be collected before the array is compacted', async () => {
    const log = new DeliveryLog<Delivery>(() => 1000, 1000, bodyChars);
    let first: Delivery | undefined = delivery(1, 'x'.repeat(900));
    const gone = new WeakRef(first);
    log.add(first);
    first = undefined;
    log.add(delivery(2, 'y'.repeat(900)));
    expect(log.list().map((d) => d.id)).toEqual(['whd_2']);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(gone.deref()).toBeUndefined();
  });
});

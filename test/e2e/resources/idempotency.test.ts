// Idempotency keys with Stripe's semantics, decided over the in-memory store with a fake clock.
import { describe, expect, test } from 'vitest';
import {
  decideIdempotency,
  replayOf,
  saveAnswer,
  type IdempotencyDecision,
} from '../../../src/resources/idempotency.js';
import { MemoryResourceStore } from '../../../src/resources/memory-store.js';
import { STYLES } from '../../../src/resources/styles.js';

const CONFIG = { header: 'idempotency-key', ttlMs: 24 * 3_600_000 };

describe('idempotency keys', () => {
  test('claimed, 409 while in flight, replayed byte for byte, 400 on another body, scoped by key name, method and path, forgotten after the ttl', async () => {
    const store = new MemoryResourceStore();
    let now = 1_000_000;
    const decide = (
      body: string,
      extra: Partial<{ method: string; path: string; keyName: string; key: string }> = {},
    ): IdempotencyDecision =>
      decideIdempotency(
        store,
        () => now,
        CONFIG,
        {
          method: extra.method ?? 'POST',
          path: extra.path ?? '/v1/payment_intents',
          headers: { 'idempotency-key': extra.key ?? 'k1' },
          body: Buffer.from(body),
          keyName: extra.keyName ?? 'default',
          scope: '',
        },
        STYLES.stripe,
      ) as IdempotencyDecision;

    expect(
      decideIdempotency(
        store,
        () => now,
        CONFIG,
        { method: 'POST', path: '/x', headers: {}, body: undefined, keyName: 'default', scope: '' },
        STYLES.stripe,
      ),
    ).toEqual({ kind: 'none' });
    expect(decide('amount=1', { method: 'GET' })).toEqual({ kind: 'none' });
    const first = decide('amount=1');
    expect(first.kind).toBe('claimed');
    const inFlight = decide('amount=1');
    expect(inFlight.kind === 'refuse' && inFlight.answer.status).toBe(409);
    expect(inFlight.kind === 'refuse' && JSON.parse(inFlight.answer.body).error.type).toBe('idempotency_error');
    if (first.kind !== 'claimed') throw new Error('not claimed');
    await first.claim.save(
      saveAnswer(200, ['content-type', 'application/json', 'content-length', '12'], Buffer.from('{"id":"pi_1"}')),
    );
    const again = decide('amount=1');
    expect(again.kind).toBe('replay');
    if (again.kind !== 'replay') throw new Error('no replay');
    const replay = replayOf(again.answer);
    expect(replay).toEqual({
      status: 200,
      headers: ['content-type', 'application/json', 'content-length', '12', 'idempotent-replayed', 'true'],
      body: Buffer.from('{"id":"pi_1"}'),
    });
    const other = decide('amount=2');
    expect(other.kind === 'refuse' && other.answer).toEqual({
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'k1' if you meant to execute a different request.",
          type: 'idempotency_error',
        },
      }),
    });
    expect(decide('amount=1', { keyName: 'ci' }).kind).toBe('claimed');
    expect(decide('amount=1', { path: '/v1/customers' }).kind).toBe('claimed');
    const released = decide('x', { key: 'k2' });
    if (released.kind === 'claimed') await released.claim.release();
    expect(decide('y', { key: 'k2' }).kind).toBe('claimed');
    now += CONFIG.ttlMs - 1;
    expect(decide('amount=1').kind).toBe('replay');
    now += 1;
    expect(decide('amount=2').kind).toBe('claimed'); // the key expired: a new request
  });

  test('each style refuses in its own shape; a key longer than 255 characters is refused', () => {
    const store = new MemoryResourceStore();
    const req = {
      method: 'POST',
      path: '/repos/o/r/issues',
      headers: { 'idempotency-key': 'k' },
      body: undefined,
      keyName: 'default',
      scope: '',
    };
    decideIdempotency(store, () => 0, CONFIG, req, STYLES.github);
    const refusal = decideIdempotency(store, () => 0, CONFIG, req, STYLES.github) as IdempotencyDecision;
    expect(refusal.kind === 'refuse' && JSON.parse(refusal.answer.body)).toMatchObject({
      documentation_url: 'https://docs.github.com/rest',
      status: '409',
    });
    const long = decideIdempotency(
      store,
      () => 0,
      CONFIG,
      { ...req, headers: { 'idempotency-key': 'x'.repeat(256) } },
      STYLES.stripe,
    ) as IdempotencyDecision;
    expect(long.kind === 'refuse' && long.answer.status).toBe(400);
  });
});

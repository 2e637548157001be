// The core steps one at a time (src/http/steps/): a fake reply records what each asked of it and a
// `next` spy says whether it passed the request on.
import { describe, expect, test } from 'vitest';
import { createAnswerState } from '../../src/answer/answer-state.js';
import { configFromObject } from '../../src/config/load.js';
import { answerStep } from '../../src/http/steps/answer.js';
import { authStep } from '../../src/http/steps/auth.js';
import { limitsStep } from '../../src/http/steps/limits.js';
import { matchStep, notFoundStep } from '../../src/http/steps/match.js';
import { createFailureSource } from '../../src/pipeline/failure.js';
import { createGate, type LimitVerdict, type StoreLimitGate } from '../../src/pipeline/limits.js';
import { createResilienceSource } from '../../src/pipeline/resilience.js';
import { createMemoryUsageStore } from '../../src/state/usage-store.js';
import { compiled, exchange, fakeReply, fakeScope, KEY, nextSpy } from './fakes.js';

const NOW = Date.parse('2026-05-01T00:00:00Z');
const clock = () => NOW;
const users = { method: 'GET', path: '/users/:id', response: { body: { id: 1 } } };

describe('auth step', async () => {
  const config = await compiled({ endpoints: [users] });
  test('no key: the 401 of missingKey, and the request goes no further', () => {
    const reply = fakeReply();
    const next = nextSpy();
    authStep({ reply }).run(exchange(config), next);
    expect(reply.calls).toEqual(['refuse missingKey']);
    expect(next).not.toHaveBeenCalled();
  });

  test('a wrong key: invalidKey; the right one: early retries noted, then on', () => {
    const reply = fakeReply();
    const next = nextSpy();
    const step = authStep({ reply });
    step.run(exchange(config, { headers: { 'x-api-key': 'mk_wrong' } }), next);
    const x = exchange(config, { headers: { 'x-api-key': KEY } });
    step.run(x, next);
    expect(reply.calls).toEqual(['refuse invalidKey', 'arrive']);
    expect(next.mock.calls).toEqual([[x]]);
    expect(x.named).toBeUndefined();
    // The journal's view names the key from this verdict: it is kept only for a credential that passed with the config's key.
    expect(x.keyVerdict).toBe('ok');
    const refused = exchange(config, { headers: { 'x-api-key': 'mk_wrong' } });
    step.run(refused, next);
    expect(refused.keyVerdict).toBeUndefined();
  });

  test('a key of keys: is named on the exchange for the limits step', async () => {
    const named = await compiled({
      keys: [{ name: 'ci', key: 'mk_ci000000000000000000000000000001' }],
      endpoints: [users],
    });
    const x = exchange(named, { headers: { authorization: 'Bearer mk_ci000000000000000000000000000001' } });
    const next = nextSpy();
    authStep({ reply: fakeReply() }).run(x, next);
    expect(next).toHaveBeenCalledOnce();
    expect(x.named?.name).toBe('ci');
    expect(x.keyVerdict).toBe(x.named);
  });
});

describe('limits step', async () => {
  const config = await compiled({
    limits: { rateLimit: { requests: 1, window: '1m' }, monthlyQuota: 100 },
    endpoints: [users],
  });

  test('admitted: the verdict is kept for the limit headers, and on; over the rate limit: rateLimited', () => {
    const reply = fakeReply();
    const next = nextSpy();
    const step = limitsStep({ reply });
    const scope = fakeScope(config, { limits: createGate(createMemoryUsageStore()), clock });
    const first = exchange(config, {}, scope);
    step.run(first, next);
    expect(next).toHaveBeenCalledOnce();
    expect(first.verdict).toMatchObject({ outcome: 'admitted', rate: { limit: 1, remaining: 0 } });
    const second = exchange(config, {}, scope);
    step.run(second, next);
    expect(next).toHaveBeenCalledOnce();
    expect(reply.calls).toEqual(['refuse rateLimited']);
    expect(second.verdict?.outcome).toBe('rate_limited');
  });

  test('a shared store answers later: the request goes on then; a store that cannot be reached gives storeUnavailable', async () => {
    const verdicts: LimitVerdict[] = [
      { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 },
      { outcome: 'store_unavailable', rate: undefined, retryAfterSeconds: 0 },
    ];
    const store = { shared: true, admit: async () => verdicts.shift()! } as unknown as StoreLimitGate;
    const reply = fakeReply();
    const next = nextSpy();
    const step = limitsStep({ reply });
    const scope = fakeScope(config, { limits: store, clock });
    step.run(exchange(config, {}, scope), next);
    expect(next).not.toHaveBeenCalled();
    await expect.poll(() => next.mock.calls.length).toBe(1);
    step.run(exchange(config, {}, scope), next);
    await expect.poll(() => reply.calls).toEqual(['refuse storeUnavailable']);
    expect(next).toHaveBeenCalledOnce();
  });

  test('a store that fails is the 500 of a bug, not an unhandled rejection', async () => {
    const store = { shared: true, admit: async () => Promise.reject(new Error('lost')) } as unknown as StoreLimitGate;
    const reply = fakeReply();
    limitsStep({ reply }).run(exchange(config, {}, fakeScope(config, { limits: store, clock })), nextSpy());
    await expect.poll(() => reply.calls).toEqual(['failed lost']);
  });
});

describe('match and not-found steps', async () => {
  const config = await compiled({ endpoints: [users, { method: 'POST', path: '/orders', response: { status: 201 } }] });

  test('match sets the config endpoint; one set before (a stub) is kept', () => {
    const next = nextSpy();
    const x = exchange(config);
    matchStep().run(x, next);
    expect(x.endpoint?.key).toBe(config.endpoints[0]!.key);
    const stubbed = exchange(config);
    stubbed.endpoint = config.endpoints[1];
    matchStep().run(stubbed, next);
    expect(stubbed.endpoint).toBe(config.endpoints[1]);
    expect(next).toHaveBeenCalledTimes(2);
  });

  test('no endpoint: the 404 with the closest endpoint as its note; an endpoint: on', () => {
    const reply = fakeReply();
    const next = nextSpy();
    const step = notFoundStep({ reply });
    step.run(exchange(config, { method: 'POST', path: '/mock/order' }), next);
    expect(reply.calls).toEqual(['refuse notFound: did you mean POST /orders?']);
    const x = exchange(config);
    x.endpoint = config.endpoints[0];
    step.run(x, next);
    expect(next.mock.calls).toEqual([[x]]);
  });
});

describe('answer step', async () => {
  const config = await compiled({
    endpoints: [users, { method: 'GET', path: '/flaky', failRate: 1, response: { body: {} } }],
  });
  const loaded = configFromObject({ apiKey: KEY, endpoints: [users] }, process.cwd());
  if (!loaded.ok) throw new Error('config');
  const parts = () => ({ reply: fakeReply(), failures: createFailureSource(7), resilience: createResilienceSource() });

  test('a static endpoint is answered at once, synchronously, with its status and label', () => {
    const p = parts();
    const x = exchange(config);
    x.endpoint = config.endpoints[0];
    answerStep(p).run(x, nextSpy());
    expect(p.reply.calls).toEqual(['send response 200']);
    expect(x.answer).toBe('response');
  });

  test('a fail rate of 1: the simulated failure', () => {
    const p = parts();
    const x = exchange(config, { path: '/mock/flaky' });
    x.endpoint = config.endpoints[1];
    answerStep(p).run(x, nextSpy());
    expect(p.reply.calls).toEqual(['refuse simulatedFailure']);
  });

  test('wants the body as a value only for an endpoint whose answers read it', async () => {
    const reads = await compiled({
      endpoints: [{ method: 'POST', path: '/echo', response: { body: { got: '${body.name}' } } }],
    });
    const step = answerStep(parts());
    expect(step.wantsWholeBody?.(exchange(reads), reads.endpoints[0])).toBe('value');
    expect(step.wantsWholeBody?.(exchange(config), config.endpoints[0])).toBe('journal');
    expect(step.wantsWholeBody?.(exchange(config), undefined)).toBe('journal');
  });
});

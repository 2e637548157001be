// The capability steps one at a time, each from its own folder: stub match (src/stubs/step.ts),
// upstream (src/upstream/answer.ts), validate (src/validate/request-step.ts) and the body step
// asking them what they need (src/http/steps/body.ts). A fake reply, a `next` spy, no server.
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, test } from 'vitest';
import type { CompiledEndpoint } from '../../src/answer/compile.js';
import { bodyStep } from '../../src/http/steps/body.js';
import { chain } from '../../src/http/steps.js';
import { stubMatchStep } from '../../src/stubs/step.js';
import { upstreamStep } from '../../src/upstream/answer.js';
import type { UpstreamStep } from '../../src/upstream/step.js';
import { validateStep } from '../../src/validate/request-step.js';
import type { EndpointValidation } from '../../src/validate/step.js';
import { createViolationTally } from '../../src/validate/tally.js';
import { compiled, exchange, fakeReply, fakeScope, nextSpy } from './fakes.js';

const config = await compiled({ endpoints: [{ method: 'GET', path: '/users/:id', response: { body: { id: 1 } } }] });
const endpoint = config.endpoints[0]!;

describe('stub match step', () => {
  test('a stub found at once is the endpoint; none: on without one', () => {
    const found: Array<CompiledEndpoint | undefined> = [endpoint, undefined];
    const step = stubMatchStep({
      reply: fakeReply(),
      stubs: { take: () => found.shift(), peek: () => endpoint, limited: true },
    })!;
    const next = nextSpy();
    const x = exchange(config);
    step.run(x, next);
    expect(x.endpoint).toBe(endpoint);
    const y = exchange(config);
    step.run(y, next);
    expect(y.endpoint).toBeUndefined();
    expect(next.mock.calls).toEqual([[x], [y]]);
    expect(step.target?.(exchange(config))).toBe(endpoint);
    // A stub with its own rate limit: the limits step asks which endpoint the request is headed for.
    expect(step.limited?.(exchange(config))).toBe(true);
  });

  test('a stub whose `times` the primary counts goes on once it answered; a failed round trip is a 500', async () => {
    const reply = fakeReply();
    const answers = [Promise.resolve(endpoint), Promise.reject(new Error('primary gone'))];
    const step = stubMatchStep({
      reply,
      stubs: { take: () => answers.shift()!, peek: () => undefined, limited: false },
    })!;
    const next = nextSpy();
    const x = exchange(config);
    step.run(x, next);
    expect(next).not.toHaveBeenCalled();
    await expect.poll(() => next.mock.calls.length).toBe(1);
    expect(x.endpoint).toBe(endpoint);
    step.run(exchange(config), next);
    await expect.poll(() => reply.calls).toEqual(['failed primary gone']);
  });

  test('no stubs given: no step', () => {
    expect(stubMatchStep({ reply: fakeReply() })).toBeUndefined();
  });
});

describe('upstream step', () => {
  const upstream = (takes: boolean): UpstreamStep & { forwarded: Array<Buffer | undefined> } => {
    const forwarded: Array<Buffer | undefined> = [];
    return {
      forwarded,
      takes: () => takes,
      forward: async (_x, _target, body) => (
        forwarded.push(body),
        { status: 201, headers: ['content-type', 'text/plain'], body: 'made', note: 'upstream 201' }
      ),
      close: async () => {},
    };
  };

  test('a request it does not take goes on; one it takes is answered by the real API, with the whole body', async () => {
    const reply = fakeReply();
    const next = nextSpy();
    const passed = exchange(config);
    upstreamStep({ reply, upstream: upstream(false) })!.run(passed, next);
    expect(next.mock.calls).toEqual([[passed]]);
    const up = upstream(true);
    const step = upstreamStep({ reply, upstream: up })!;
    const x = exchange(config, { method: 'POST', path: '/mock/unknown' });
    x.wholeBody = Buffer.from('{"a":1}');
    step.run(x, next);
    await expect.poll(() => reply.calls).toEqual(['send upstream 201']);
    expect(up.forwarded).toEqual([x.wholeBody]);
    expect(next).toHaveBeenCalledOnce();
    expect(step.wantsWholeBody?.(x, undefined)).toBe('whole');
  });
});

describe('validate step', () => {
  const violation = {
    in: 'query',
    pointer: '/limit',
    param: 'limit',
    keyword: 'type',
    message: 'must be integer',
  } as const;
  const validation = (mode: 'report' | 'enforce'): EndpointValidation => ({
    mode,
    check: () => [violation],
    answer: () => ({ status: 400, headers: ['content-type', 'application/json'], body: '{}' }),
  });

  test('enforce: the 400 of the description; report: the violations header, and on', () => {
    const reply = fakeReply();
    const next = nextSpy();
    const violations = createViolationTally();
    const step = validateStep({ reply, violations });
    const enforced = exchange(config);
    enforced.endpoint = { ...endpoint, validation: validation('enforce') };
    step.run(enforced, next);
    expect(reply.calls).toEqual(['send validation 400']);
    expect(next).not.toHaveBeenCalled();
    const reported = exchange(config);
    reported.endpoint = { ...endpoint, validation: validation('report') };
    step.run(reported, next);
    expect(next.mock.calls).toEqual([[reported]]);
    expect(reported.violations).toEqual([violation]);
    expect(reported.extra.length).toBe(2);
    expect(violations.violated).toBe(2);
  });

  test('a request that comes before the description was read waits for it, then is checked; the parts not checked and a validation that cannot run are noted', async () => {
    const reply = fakeReply();
    const next = nextSpy();
    const step = validateStep({ reply, violations: createViolationTally() });
    let read!: () => void;
    const reading = new Promise<void>((done) => (read = done));
    let done = false;
    void reading.then(() => (done = true));
    const waiting: EndpointValidation = {
      mode: 'report',
      pending: () => (done ? undefined : reading),
      check: (_input, unchecked) => (unchecked?.push('query parameter q', 'query parameter q'), []),
      answer: () => ({ status: 400, headers: [], body: '' }),
    };
    const x = exchange(config);
    x.endpoint = { ...endpoint, validation: waiting };
    step.run(x, next);
    await Promise.resolve();
    expect(next).not.toHaveBeenCalled();
    read();
    await expect.poll(() => next.mock.calls.length).toBe(1);
    expect(x.violations).toEqual([]);
    expect(x.notes).toEqual([
      'not validated: query parameter q (its schema in the description cannot be compiled; the rest of the request was checked)',
    ]);
    // Read: the next request is checked at once.
    const y = exchange(config);
    y.endpoint = x.endpoint;
    step.run(y, next);
    expect(next.mock.calls.length).toBe(2);
    const skipped: EndpointValidation = {
      ...waiting,
      pending: () => undefined,
      check: () => undefined,
      skipped: () => 'not validated: the OpenAPI description cannot be read: gone',
      checks: () => false,
    };
    const z = exchange(config);
    z.endpoint = { ...endpoint, validation: skipped };
    step.run(z, next);
    expect(next.mock.calls.length).toBe(3);
    expect([z.violations, z.notes]).toEqual([
      undefined,
      ['not validated: the OpenAPI description cannot be read: gone'],
    ]);
    expect(step.wantsWholeBody?.(z, z.endpoint)).toBe('journal');
    expect(reply.calls).toEqual([]);
  });

  test('an endpoint without validation goes on untouched; its body is wanted as a value only with validation', () => {
    const next = nextSpy();
    const step = validateStep({ reply: fakeReply() });
    const x = exchange(config);
    x.endpoint = endpoint;
    step.run(x, next);
    expect(next).toHaveBeenCalledOnce();
    expect(x.violations).toBeUndefined();
    expect(step.wantsWholeBody?.(x, endpoint)).toBe('journal');
    expect(step.wantsWholeBody?.(x, { ...endpoint, validation: validation('report') })).toBe('value');
  });
});

describe('body step', () => {
  /** An exchange whose request sends `text` as JSON. */
  function posting(text: string) {
    const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) };
    const x = exchange(
      config,
      { method: 'POST', headers },
      fakeScope(config, { journal: { enabled: true, record() {} } }),
    );
    const req = Object.assign(Readable.from([Buffer.from(text)]), {
      headers: x.req.headers,
      complete: true,
    }) as unknown as IncomingMessage;
    x.req = req;
    return x;
  }

  test('reads the body as a value when a step after it wants that, then goes on', async () => {
    const next = nextSpy();
    const run = chain(
      [bodyStep({ reply: fakeReply() }), { name: 'reads', run: (x, n) => n(x), wantsWholeBody: () => 'value' }],
      next,
    );
    const x = posting('{"name":"ada"}');
    run(x);
    await expect.poll(() => next.mock.calls.length).toBe(1);
    expect(x.body).toEqual({ name: 'ada' });
    expect(x.wholeBody?.toString()).toBe('{"name":"ada"}');
  });

  test('no step wants it: only the journal keeps its start; a body over maxBodySize is refused', async () => {
    const next = nextSpy();
    const reply = fakeReply();
    const run = chain([bodyStep({ reply })], next);
    const x = posting('{"name":"ada"}');
    run(x);
    await expect.poll(() => next.mock.calls.length).toBe(1);
    expect(x.body).toBeUndefined();
    expect(x.wholeBody).toBeUndefined();
    expect(x.journalBody?.toString()).toBe('{"name":"ada"}');

    const small = await compiled({ server: { maxBodySize: '4b' }, endpoints: [] });
    const big = posting('{"name":"ada"}');
    big.compiled = small;
    run(big);
    await expect.poll(() => reply.calls).toEqual(['refuse payloadTooLarge']);
    expect(next).toHaveBeenCalledOnce();
  });
});

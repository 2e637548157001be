// What the speed work on the webhook path must not change: event ids and chaos come out exactly as
// one `next` per word and per chaos kind of each delivery (the numbers of a kind at rate 0 are
// skipped, not drawn, and later numbers stay where they were); what crosses to the delivery thread
// comes back as it went (numbers in one Float64Array, each text once); and the JSON of an event's data
// written once for a template without `${…}` is what writing it per event gives.
import { describe, expect, test } from 'vitest';
import { createDrawStreams } from '../../src/seeded.js';
import type { ChaosConfig } from '../../src/config/types-webhooks.js';
import { createWebhookDraws, eventIdAt } from '../../src/webhooks/draws.js';
import { idPrefix } from '../../src/webhooks/envelope.js';
import { compileSends, compileWebhooks } from '../../src/webhooks/compile.js';
import { prepareSends, staticDataText } from '../../src/webhooks/prepare.js';
import { decodeOutcomes, decodeRequests, encodeOutcomes, encodeRequests } from '../../src/webhooks/thread-wire.js';
import { EventSource } from '../../src/webhooks/held.js';
import type { AttemptOutcome, AttemptRequest } from '../../src/webhooks/sender.js';
import { buildSend, buildWebhooks } from '../../src/config/build-webhooks.js';
import { emptyContext } from '../../src/webhooks/compile.js';

const KINDS = ['duplicate', 'reorder', 'badSignature', 'staleTimestamp'] as const;
const HEX = (x: number): string => x.toString(16).padStart(8, '0');

/** The draws as they were made before: every number drawn through `next`, in order. */
function referenceDraws(seed: () => number) {
  let s: { seed: number; d: ReturnType<typeof createDrawStreams> } | undefined;
  const d = () => (s?.seed === seed() ? s : (s = { seed: seed(), d: createDrawStreams(seed()) })).d;
  const word = (): string => HEX(Math.floor(d().next('webhook event id') * 2 ** 32));
  return {
    eventId(envelope: 'stripe' | 'standard' | 'github' | 'none'): string {
      const w = [word(), word(), word(), word()];
      if (envelope === 'github')
        return `${w[0]}-${w[1]!.slice(0, 4)}-4${w[1]!.slice(5, 8)}-a${w[2]!.slice(1, 4)}-${w[2]!.slice(4)}${w[3]}`;
      return `${idPrefix(envelope)}${w.join('').slice(0, 24)}`;
    },
    chaos(target: string, rates: ChaosConfig) {
      const on = KINDS.map((kind) => {
        const u = d().next(`webhook chaos ${kind} ${target}`);
        return rates[kind] > 0 && u < rates[kind];
      });
      return { duplicate: on[0], reorder: on[1], badSignature: on[2], staleTimestamp: on[3] };
    },
  };
}

describe('webhook draws', () => {
  test('ids and chaos are those of drawing every number, whatever the rates, targets, envelopes and seed changes', () => {
    let seed = 7;
    const fast = createWebhookDraws(() => seed);
    const slow = referenceDraws(() => seed);
    const rates: ChaosConfig[] = [
      { duplicate: 0, reorder: 0, badSignature: 0, staleTimestamp: 0 },
      { duplicate: 0.5, reorder: 0, badSignature: 0.3, staleTimestamp: 0 },
      { duplicate: 0.2, reorder: 0.4, badSignature: 0.6, staleTimestamp: 0.8 },
    ];
    const envelopes = ['stripe', 'standard', 'github', 'none'] as const;
    let chaosSeen = 0;
    for (let i = 0; i < 3000; i++) {
      if (i === 1500) seed = 8; // a reload with another seed starts every stream over
      const envelope = envelopes[i % 4]!;
      expect(eventIdAt(fast.reserveEventId(), envelope)).toBe(slow.eventId(envelope));
      // Rates change from one delivery to the next (reloads): a kind at 0 still moves its stream on.
      const target = i % 3 === 0 ? 'app' : 'other';
      const r = rates[(i * 7) % 3]!;
      const got = fast.chaos(target, r);
      expect(got).toEqual(slow.chaos(target, r));
      if (Object.values(got).some(Boolean)) chaosSeen++;
    }
    expect(chaosSeen).toBeGreaterThan(500);
  });
});

describe('the messages to and from the delivery thread', () => {
  const sign = {
    scheme: 'stripe' as const,
    secret: 's3cret',
    header: 'X-Signature',
    algorithm: 'sha256' as const,
    encoding: 'hex' as const,
    template: '${body}',
    prefix: '',
  };
  const other = { ...sign, scheme: 'github' as const };
  const place = (n: number) => ({ lanes: [3735928559, 123] as const, n });

  test('attempts come out as they went in, each signing config sent once, and write the same id and body', () => {
    const batch: AttemptRequest[] = [
      {
        id: 1,
        url: 'http://127.0.0.1:1/a',
        sign,
        source: new EventSource('stripe', 'charge.succeeded', 1767225600123, '{"a":"é"}', place(0)),
        timestamp: 1767225600,
        badSignature: false,
        timeoutMs: 10_000,
      },
      {
        id: 2,
        url: 'http://127.0.0.1:1/b',
        sign: other,
        source: new EventSource('github', 't', 0, '', place(4)),
        timestamp: 1,
        badSignature: true,
        timeoutMs: 1,
      },
      {
        id: 3,
        url: 'not a url',
        sign,
        source: new EventSource('standard', 'u', 1767225600000.5, '[]', place(8)),
        timestamp: 0,
        badSignature: false,
        timeoutMs: 5.5,
      },
      // Texts with what a separator would trip on: newlines, spaces, digits, non-ASCII; a time before 1970.
      {
        id: 4,
        url: 'http://127.0.0.1:1/c d\n',
        sign: other,
        source: new EventSource('none', '\n 1', -1500.25, '1 2 3\n4\n\n"\u2028"', place(2 ** 40)),
        timestamp: -2,
        badSignature: false,
        timeoutMs: 9,
      },
    ];
    batch.push({ ...batch[0]!, id: 5 }); // the same texts again: sent once
    const message = structuredClone(encodeRequests(batch));
    expect(message[0]).toHaveLength(2);
    expect(message[1]).toBeInstanceOf(Float64Array);
    // Each distinct text once: the two stripe attempts' URLs differ, their types and data too.
    expect(message[2]).toHaveLength(new Set(batch.flatMap((r) => [r.url, r.source.type, r.source.dataText])).size);
    const back = decodeRequests(message);
    expect(back).toEqual(batch);
    expect(back.map((r) => [r.source.eventId, r.source.body])).toEqual(
      batch.map((r) => [r.source.eventId, r.source.body]),
    );
  });

  test('outcomes come out as they went in: fields present or absent alike', () => {
    const outcomes: AttemptOutcome[] = [
      { id: 1, signed: true, result: { status: 204, ms: 3 } },
      { id: 2, signed: true, result: { error: 'ECONNREFUSED', ms: 0 } },
      { id: 3, signed: true, result: { status: 302, error: 'redirect to /x: not followed', ms: 12 } },
      { id: 4, signed: true, result: { status: 429, retryAfterMs: 0, ms: 1 } },
      { id: 5, signed: false, result: { error: '', ms: 7 } },
      { id: 6, signed: true, result: { status: 0, ms: 0 } },
      { id: 7, signed: false, result: { status: 500, error: 'line 1\nline 2 3 -4', retryAfterMs: 1500, ms: 4 } },
    ];
    const back = decodeOutcomes(structuredClone(encodeOutcomes(outcomes)));
    expect(back).toStrictEqual(outcomes);
  });
});

test('the data of a template without ${…} is written once, as writing it per event writes it', () => {
  const raw = {
    targets: { app: { url: 'http://127.0.0.1:1/h' } },
    events: {
      fixed: { data: { object: { id: 'ch_1', note: 'é "q"' } } },
      none: {},
      dynamic: { data: { at: '${now}' } },
    },
  };
  const webhooks = compileWebhooks(buildWebhooks(raw), { env: {} })!;
  const sends = compileSends(
    buildSend([
      { event: 'fixed', to: 'app' },
      { event: 'none', to: 'app' },
      { event: 'dynamic', to: 'app' },
      { event: 'fixed', to: 'app', data: { extra: 1 } },
    ])!,
    { env: {} },
  );
  const prepared = prepareSends(webhooks, sends, emptyContext(1767225600000), () => undefined, null);
  const texts = prepared.map((p) => ('event' in p ? p.event.dataText : 'problem'));
  expect(texts).toEqual([JSON.stringify({ object: { id: 'ch_1', note: 'é "q"' } }), '{}', undefined, undefined]);
  for (const p of prepared)
    if ('event' in p && p.event.dataText !== undefined)
      expect(p.event.dataText).toBe(JSON.stringify(p.event.data ?? {}));
  // Written once per compiled template: a reload compiles a new one, with its own text.
  expect(staticDataText(webhooks.events.get('fixed')!, sends[0]!)).toBe(texts[0]);
});

test("a send reads the request's params, query, cookies and random source only when its data reads them", () => {
  const raw = {
    targets: { app: { url: 'http://127.0.0.1:1/h' } },
    events: { fixed: { data: { a: 1 } }, q: { data: { page: '${query.page}', r: '${randomInt(1, 1)}' } } },
  };
  const webhooks = compileWebhooks(buildWebhooks(raw), { env: {} })!;
  const reads: string[] = [];
  const base = emptyContext(1767225600000);
  const ctx = {
    headers: {},
    body: undefined,
    request: 1,
    state: {},
    now: base.now,
    get params() {
      reads.push('params');
      return {};
    },
    get query() {
      reads.push('query');
      return { page: '2' };
    },
    get cookies() {
      reads.push('cookies');
      return {};
    },
    get random() {
      reads.push('random');
      return base.random;
    },
  };
  const fixed = prepareSends(
    webhooks,
    compileSends(buildSend([{ event: 'fixed', to: 'app' }])!, { env: {} }),
    ctx,
    () => undefined,
    null,
  );
  expect(fixed).toMatchObject([{ event: { data: { a: 1 } } }]);
  expect(reads).toEqual([]);
  const q = prepareSends(
    webhooks,
    compileSends(buildSend([{ event: 'q', to: 'app' }])!, { env: {} }),
    ctx,
    () => undefined,
    null,
  );
  expect(q).toMatchObject([{ event: { data: { page: '2', r: 1 } } }]);
  expect(reads.sort()).toEqual(['query', 'random']);
});

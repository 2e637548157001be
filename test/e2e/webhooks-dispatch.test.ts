// The dispatcher's own rules, with a fake clock and a fake sender: deliveries are bounded (past
// MAX_PENDING the new event is dropped and reported, never queued), due attempts go out in
// batches (one hand-over per turn of the event loop, at most MAX_IN_FLIGHT at once), and the
// delivery log is bounded while pending deliveries go on.
import { describe, expect, test } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompiledTarget } from '../../src/webhooks/compile.js';
import { createDispatcher, MAX_IN_FLIGHT, MAX_PENDING, type DispatcherOptions } from '../../src/webhooks/dispatcher.js';
import { isoTime } from '../../src/iso-time.js';
import { eventText, wrapEvent } from '../../src/webhooks/envelope.js';
import { EventSource } from '../../src/webhooks/held.js';
import { createLocalSender, type AttemptOutcome, type AttemptRequest } from '../../src/webhooks/sender.js';
import { signatureHeaders } from '../../src/webhooks/sign.js';
import { waitFor } from '../helpers/cli.js';

const target = (url: string): CompiledTarget => ({
  name: 'app',
  url,
  sign: {
    scheme: 'github',
    secret: 'dispatch-secret',
    header: '',
    algorithm: 'sha256',
    encoding: 'hex',
    template: '',
    prefix: '',
  },
  scheduleMs: [60_000],
  timeoutMs: 60_000,
  chaos: { duplicate: 0, reorder: 0, badSignature: 0, staleTimestamp: 0 },
  disabled: false,
});
const event = { type: 'ping', envelope: 'github' as const, data: { zen: 'hi' }, target: 'app', endpoint: null };
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function fakeSender() {
  const batches: AttemptRequest[][] = [];
  let report: (outcomes: AttemptOutcome[]) => void = () => {};
  const sender: DispatcherOptions['sender'] = (r) => {
    report = r;
    return { send: (batch) => void batches.push([...batch]), close: () => {} };
  };
  return {
    batches,
    sender,
    answer: (batch: AttemptRequest[], status: number) =>
      report(batch.map((r) => ({ id: r.id, signed: true, result: { status, ms: 1 } }))),
  };
}

describe('the dispatcher', () => {
  test("a burst of due deliveries goes to the sender in one batch per turn, never on the caller's path", async () => {
    const fake = fakeSender();
    const now = Date.parse('2026-01-01T00:00:00Z');
    const d = createDispatcher({
      clock: () => now,
      realClock: () => now,
      seed: () => 1,
      target: () => target('http://127.0.0.1:9/h'),
      capacity: () => 1000,
      onChange: () => {},
      sender: fake.sender,
    });
    for (let i = 0; i < MAX_IN_FLIGHT + 10; i++) d.send(event, 0);
    expect(fake.batches).toHaveLength(0); // never on the caller's path
    await turn();
    // All of them at once: the sender sends MAX_IN_FLIGHT at a time and keeps the rest in order.
    expect(fake.batches.map((b) => b.length)).toEqual([MAX_IN_FLIGHT + 10]);
    expect(fake.batches[0]![0]).toMatchObject({
      url: 'http://127.0.0.1:9/h',
      timestamp: now / 1000,
      badSignature: false,
      source: { type: 'ping', created: now },
    });
    d.send(event, 0);
    d.send(event, 0);
    await turn();
    expect(fake.batches.map((b) => b.length)).toEqual([MAX_IN_FLIGHT + 10, 2]);
    fake.answer(fake.batches[0]!, 204);
    fake.answer(fake.batches[1]!, 204);
    expect(d.pending()).toBe(0);
    expect(d.counts().get('app')).toEqual({ pending: 0, delivered: MAX_IN_FLIGHT + 12, failed: 0 });
    // Shown as admin answers show it: the headers of the attempt written from what it was signed with.
    const shown = d.list({ limit: 1 })[0]!.toJSON();
    const body = Buffer.from(shown.body);
    expect(shown).toMatchObject({
      status: 'delivered',
      attempts: [{ time: '2026-01-01T00:00:00.000Z', status: 204 }],
      nextAttempt: null,
    });
    expect(shown.headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'mockapi-webhooks',
      'x-mockapi-webhook-delivery': '1',
      ...signatureHeaders(target('').sign, { body, id: shown.eventId, type: 'ping', timestamp: now / 1000 }),
    });
    expect(shown.body).toBe(JSON.stringify({ zen: 'hi' }));
    d.close();
  });

  test('the delivery log keeps the last `capacity` deliveries; a pending one dropped from it is still delivered', async () => {
    const fake = fakeSender();
    const d = createDispatcher({
      clock: Date.now,
      seed: () => 1,
      target: () => target('http://127.0.0.1:9/h'),
      capacity: () => 3,
      onChange: () => {},
      sender: fake.sender,
    });
    for (let i = 0; i < 5000; i++) d.send(event, 0);
    expect(d.list().map((x) => x.id)).toEqual(['whd_4998', 'whd_4999', 'whd_5000']);
    expect(d.list({ since: 4998 }).map((x) => x.id)).toEqual(['whd_4999', 'whd_5000']);
    await turn();
    fake.answer(fake.batches[0]!, 200);
    expect(d.counts().get('app')?.delivered).toBe(5000);
    d.close();
  });
});

test('when the sender loses the attempts it had not answered (its thread stopped), each fails with the reason and is retried on its schedule', async () => {
  let lost: (reason: string) => void = () => {};
  let report: (outcomes: AttemptOutcome[]) => void = () => {};
  const sent: AttemptRequest[][] = [];
  const now = Date.parse('2026-01-01T00:00:00Z');
  let clock = now;
  const d = createDispatcher({
    clock: () => clock,
    realClock: () => clock,
    seed: () => 1,
    target: () => target('http://127.0.0.1:9/h'),
    capacity: () => 1000,
    onChange: () => {},
    sender: (r, l) => {
      report = r;
      lost = l;
      return { send: (batch) => void sent.push([...batch]), close: () => {} };
    },
  });
  for (let i = 0; i < 3; i++) d.send(event, 0);
  await turn();
  report([{ id: sent[0]![0]!.id, signed: true, result: { status: 204, ms: 1 } }]); // one answered before the loss
  lost('the delivery thread stopped: exit code 1');
  const shown = d.list().map((x) => x.toJSON());
  expect(shown.map((x) => x.status)).toEqual(['delivered', 'pending', 'pending']);
  expect(shown.slice(1).map((x) => x.attempts.map((a) => a.error))).toEqual([
    ['the delivery thread stopped: exit code 1'],
    ['the delivery thread stopped: exit code 1'],
  ]);
  expect(shown.slice(1).map((x) => x.nextAttempt)).toEqual([isoTime(now + 60_000), isoTime(now + 60_000)]);
  expect(shown.slice(1).map((x) => x.headers)).toEqual([{}, {}]); // never signed
  lost('again'); // nothing is out any more: nothing changes
  expect(d.list().map((x) => x.toJSON().attempts.length)).toEqual([1, 1, 1]);
  clock += 60_000;
  d.clockMoved();
  await turn();
  expect(sent.map((b) => b.length)).toEqual([3, 2]); // retried on the schedule
  d.close();
});

describe('the sender', () => {
  test(`sends at most ${MAX_IN_FLIGHT} attempts at once per receiver and the rest in order as those finish`, async () => {
    const open: import('node:http').ServerResponse[] = [];
    let most = 0;
    const server = createServer((req, res) => {
      req.resume();
      open.push(res);
      most = Math.max(most, open.length);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
    const outcomes: AttemptOutcome[] = [];
    const sender = createLocalSender(MAX_IN_FLIGHT, (batch) => outcomes.push(...batch));
    const sign = target(url).sign;
    const requests = Array.from({ length: MAX_IN_FLIGHT + 6 }, (_, i): AttemptRequest => ({
      id: i + 1,
      url,
      sign,
      source: new EventSource('github', 'ping', 0, '{}', { lanes: [1, 2], n: 4 * i }),
      timestamp: 1,
      badSignature: false,
      timeoutMs: 10_000,
    }));
    try {
      sender.send(requests);
      await waitFor(async () => (open.length === MAX_IN_FLIGHT ? true : undefined));
      for (const res of open.splice(0, 6)) res.writeHead(204).end();
      await waitFor(async () => (outcomes.length === 6 && open.length === MAX_IN_FLIGHT ? true : undefined));
      for (const res of open.splice(0)) res.writeHead(204).end();
      await waitFor(async () => (outcomes.length === MAX_IN_FLIGHT + 6 ? true : undefined));
      expect(most).toBe(MAX_IN_FLIGHT);
      expect(outcomes.map((o) => o.result.status)).toEqual(requests.map(() => 204));
      expect(new Set(outcomes.map((o) => o.id))).toEqual(new Set(requests.map((r) => r.id)));
    } finally {
      sender.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('pending deliveries are bounded', () => {
  test(`past ${MAX_PENDING} pending, a new event is dropped: logged as failed with the reason, counted, never queued`, async () => {
    // A receiver that never answers: every attempt stays in flight, everything else pending.
    const sockets = new Set<import('node:net').Socket>();
    const server = createServer(() => {});
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
    const changes: string[] = [];
    const d = createDispatcher({
      clock: Date.now,
      seed: () => 1,
      target: () => target(url),
      capacity: () => 10,
      onChange: (x) => void (x.status === 'failed' && changes.push(x.id)),
    });
    try {
      for (let i = 0; i < MAX_PENDING; i++) d.send(event, 0);
      const dropped = d.send(event, 0);
      expect(dropped.toJSON()).toMatchObject({
        id: `whd_${MAX_PENDING + 1}`,
        status: 'failed',
        attempts: [],
        nextAttempt: null,
        headers: {},
      });
      expect(dropped.error).toMatch(
        new RegExp(
          `^dropped: ${MAX_PENDING} deliveries \\(\\d+ KiB\\) were already pending, the most this server holds; the event was not sent$`,
        ),
      );
      expect(d.pending()).toBe(MAX_PENDING);
      expect(d.counts().get('app')).toEqual({ pending: MAX_PENDING, delivered: 0, failed: 1 });
      expect(changes).toEqual([dropped.id]);
    } finally {
      d.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  }, 30_000);
});

test('eventText writes what JSON.stringify(wrapEvent(…)) writes, for every envelope', () => {
  const datas = [
    undefined,
    null,
    {},
    { object: { id: 'ch_1', amount: 500, note: 'é "quoted" \\ \u2028' } },
    [1, 'two'],
    'text',
    0,
    { fn: () => 1, n: undefined },
  ];
  for (const envelope of ['stripe', 'standard', 'github', 'none'] as const) {
    for (const data of datas) {
      for (const created of [0, 1767225600123, -1500]) {
        const parts = { id: 'evt_0123456789abcdef01234567', type: 'charge."succeeded"', created, data };
        expect(eventText(envelope, parts)).toBe(JSON.stringify(wrapEvent(envelope, parts)));
      }
    }
  }
});

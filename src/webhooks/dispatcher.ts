import type { CompiledTarget } from './compile.js';
import type { Counts, Dispatcher, DispatcherOptions, OutgoingEvent, TargetOverride } from './dispatch-types.js';
import { chaosNames, createWebhookDraws, type ChaosFlags } from './draws.js';
import { eventText } from './envelope.js';
import { DeliveryLog, isoTime as iso, type Delivery } from './log.js';
import { outcomeOf } from './outcome.js';
import { createSchedule } from './schedule.js';
import type { AttemptOutcome, AttemptRequest } from './sender.js';
import { createThreadSender } from './thread-sender.js';

/** Attempts sent at once (keep-alive connections per receiver); the sender keeps the rest in order. */
export const MAX_IN_FLIGHT = 64;
/** How far back a `staleTimestamp` signature is dated: past the 5 minutes receivers accept. */
export const STALE_SECONDS = 600;
/** How long a `reorder` delivery is held back (server clock), so that the next event overtakes it. */
export const REORDER_HOLD_MS = 1_000;
/** The most deliveries pending at once, and the most bytes of their bodies: past either, new events are dropped. */
export const MAX_PENDING = 10_000;
export const MAX_PENDING_BYTES = 64 * 1024 * 1024;

export type { Dispatcher, DispatcherOptions, OutgoingEvent, TargetOverride } from './dispatch-types.js';

interface Job {
  readonly delivery: Delivery;
  readonly url: string;
  readonly flags: ChaosFlags;
  /** Server-clock time of the next attempt. */
  dueAt: number;
  /** While an attempt is out: when it started (server clock) and the target it went to. */
  startedAt?: number;
  target?: CompiledTarget;
}

/**
 * Builds the dispatcher: at least once, retried on the target's schedule; 410 disables the target.
 * A `send` only makes the event and queues it; attempts start from the schedule, in batches, and
 * are signed and sent by the sender (off the thread that answers requests).
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { clock } = options;
  const realClock = options.realClock ?? Date.now;
  const log = new DeliveryLog(options.capacity);
  const draws = createWebhookDraws(options.seed);
  const overrides = new Map<string, TargetOverride>();
  const counts = new Map<string, Counts>();
  const inFlight = new Map<number, Job>(); // by attempt number
  const drained = new Set<() => void>();
  const validUrls = new Map<string, boolean>();
  let pending = 0;
  let pendingBytes = 0;
  let sequence = 0;
  let attempts = 0;
  let closed = false;
  // Everything due is handed over (the sender sends MAX_IN_FLIGHT at once and queues the rest), so
  // this thread does not wake for every finished attempt to feed the next one.
  const schedule = createSchedule<Job>(clock, MAX_PENDING, start);
  const sender = (options.sender ?? ((report) => createThreadSender(MAX_IN_FLIGHT, report)))(settleAll);

  const countsOf = (target: string): Counts => {
    let c = counts.get(target);
    if (c === undefined) counts.set(target, (c = { pending: 0, delivered: 0, failed: 0 }));
    return c;
  };
  const isUrl = (text: string): boolean => {
    let ok = validUrls.get(text);
    if (ok === undefined) {
      if (validUrls.size >= 256) validUrls.clear();
      validUrls.set(text, (ok = URL.canParse(text)));
    }
    return ok;
  };

  type Base = Pick<Delivery, 'event' | 'eventId' | 'target' | 'url' | 'endpoint' | 'body' | 'chaos'>;
  function create(base: Base, flags: ChaosFlags, dueAt: number): Delivery {
    // Written field by field (no spread): the same keys in the same order as the log has always shown.
    const delivery: Delivery = { id: `whd_${++sequence}`, event: base.event, eventId: base.eventId, target: base.target, url: base.url, endpoint: base.endpoint, body: base.body, chaos: base.chaos, status: 'pending', attempts: [], nextAttempt: iso(dueAt), headers: {}, error: null };
    log.add(delivery);
    const bytes = base.body.length;
    if (pending >= MAX_PENDING || pendingBytes + bytes > MAX_PENDING_BYTES) {
      // Bounded: what is already pending keeps its place; the new event is reported, not queued.
      delivery.status = 'failed';
      delivery.nextAttempt = null;
      delivery.error = `dropped: ${pending} deliveries (${Math.round(pendingBytes / 1024)} KiB) were already pending, the most this server holds; the event was not sent`;
      countsOf(delivery.target).failed++;
      options.onChange(delivery);
      return delivery;
    }
    pending++;
    pendingBytes += bytes;
    countsOf(delivery.target).pending++;
    options.onChange(delivery);
    schedule.add({ delivery, url: base.url, flags, dueAt });
    return delivery;
  }

  function send(event: OutgoingEvent, afterMs: number): Delivery {
    const target = options.target(event.target);
    const now = clock();
    const id = draws.eventId(event.envelope);
    const body = eventText(event.envelope, { id, type: event.type, created: now, data: event.data, dataText: event.dataText });
    const flags = draws.chaos(event.target, target?.chaos);
    const url = event.url ?? overrides.get(event.target)?.url ?? target?.url ?? '';
    const dueAt = now + Math.max(0, afterMs) + (flags.reorder ? REORDER_HOLD_MS : 0);
    return create({ event: event.type, eventId: id, target: event.target, url, endpoint: event.endpoint, body, chaos: chaosNames(flags) }, flags, dueAt);
  }

  /** Hands the due jobs to the sender in one batch (called by the schedule, never on a request's path). */
  function start(batch: Job[]): void {
    const requests: AttemptRequest[] = [];
    for (const job of batch) {
      const { delivery } = job;
      const target = options.target(delivery.target);
      const notSent = target === undefined ? `no target "${delivery.target}" in the config now served` : (overrides.get(delivery.target)?.disabled ?? target.disabled) ? `target "${delivery.target}" is disabled` : !isUrl(job.url) ? `not a URL: ${JSON.stringify(job.url)}` : undefined;
      if (notSent !== undefined || target === undefined) {
        schedule.finished();
        finish(job, 'failed', notSent ?? '');
        continue;
      }
      const attempt = ++attempts;
      job.startedAt = clock();
      job.target = target;
      inFlight.set(attempt, job);
      delivery.nextAttempt = null;
      // Signed on the real clock at each attempt: a virtual clock years away would make every signature stale.
      const timestamp = Math.floor(realClock() / 1000) - (job.flags.staleTimestamp ? STALE_SECONDS : 0);
      requests.push({ id: attempt, url: job.url, sign: target.sign, body: delivery.body, eventId: delivery.eventId, type: delivery.event, timestamp, badSignature: job.flags.badSignature, timeoutMs: target.timeoutMs });
    }
    if (requests.length > 0) sender.send(requests);
  }

  function settleAll(outcomes: AttemptOutcome[]): void {
    for (const outcome of outcomes) {
      const job = inFlight.get(outcome.id);
      if (job === undefined) continue;
      inFlight.delete(outcome.id);
      schedule.finished();
      if (!closed) settle(job, outcome);
    }
  }

  function settle(job: Job, { headers, result }: AttemptOutcome): void {
    const { delivery } = job;
    if (Object.keys(headers).length > 0) delivery.headers = headers;
    delivery.attempts.push({ time: iso(job.startedAt ?? clock()), status: result.status ?? null, ms: result.ms, error: result.error ?? null });
    const verdict = outcomeOf(result, delivery.attempts.length, job.target?.scheduleMs ?? []);
    switch (verdict.kind) {
      case 'delivered':
        finish(job, 'delivered', null);
        if (job.flags.duplicate) create({ event: delivery.event, eventId: delivery.eventId, target: delivery.target, url: delivery.url, endpoint: delivery.endpoint, body: delivery.body, chaos: ['duplicate'] }, { ...job.flags, duplicate: false, badSignature: false, staleTimestamp: false }, clock());
        return;
      case 'gone':
        overrides.set(delivery.target, { ...overrides.get(delivery.target), disabled: true });
        return finish(job, 'failed', `the receiver answered 410 Gone: target "${delivery.target}" is now disabled`);
      case 'give-up':
        return finish(job, 'failed', verdict.error);
      case 'retry':
        job.dueAt = clock() + verdict.waitMs;
        delivery.nextAttempt = iso(job.dueAt);
        options.onChange(delivery);
        schedule.add(job);
    }
  }

  function finish(job: Job, status: 'delivered' | 'failed', error: string | null): void {
    const { delivery } = job;
    delivery.status = status;
    delivery.error = error;
    delivery.nextAttempt = null;
    pending--;
    pendingBytes -= delivery.body.length;
    const c = countsOf(delivery.target);
    c.pending--;
    c[status]++;
    options.onChange(delivery);
    if (pending === 0) for (const done of [...drained]) done();
  }

  return {
    send,
    replay(id) {
      const old = log.find(id);
      if (old === undefined) return undefined;
      const calm = { duplicate: false, reorder: false, badSignature: false, staleTimestamp: false };
      return create({ event: old.event, eventId: old.eventId, target: old.target, url: old.url, endpoint: null, body: old.body, chaos: [] }, calm, clock());
    },
    list: (filter) => log.list(filter),
    counts: () => counts,
    override(name, change) {
      const next = { ...overrides.get(name), ...change };
      overrides.set(name, next);
      if (change.disabled === false) schedule.poke();
      return next;
    },
    overrides: () => overrides,
    clockMoved: () => schedule.poke(),
    pending: () => pending,
    drain(ms) {
      if (pending === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(limit);
          drained.delete(done);
          resolve(pending === 0);
        };
        const limit = setTimeout(done, ms);
        drained.add(done);
      });
    },
    close() {
      closed = true;
      schedule.close();
      sender.close();
      inFlight.clear();
      for (const done of [...drained]) done();
    },
    clear() {
      log.clear();
    },
  };
}

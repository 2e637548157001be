import type { CompiledTarget } from './compile.js';
import type { Counts, Dispatcher, DispatcherOptions, OutgoingEvent, TargetOverride } from './dispatch-types.js';
import { chaosNames, createWebhookDraws, type ChaosFlags } from './draws.js';
import { EventSource, HeldDelivery } from './held.js';
import { DeliveryLog } from './log.js';
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

const CALM: ChaosFlags = { duplicate: false, reorder: false, badSignature: false, staleTimestamp: false };
const DUPLICATE = ['duplicate'];

/**
 * Builds the dispatcher: at least once, retried on the target's schedule; 410 disables the target.
 * A `send` only makes the delivery (numbers and references: see {@link HeldDelivery}) and queues it;
 * attempts start from the schedule, in batches, and are written, signed and sent by the sender (off
 * the thread that answers requests).
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { clock } = options;
  const realClock = options.realClock ?? Date.now;
  // What each delivery keeps: its event (see EventSource.size) and its URL, which may come from a request.
  const log = new DeliveryLog<HeldDelivery>(options.capacity, undefined, (d) => d.source.size + d.url.length);
  const draws = createWebhookDraws(options.seed);
  const overrides = new Map<string, TargetOverride>();
  const counts = new Map<string, Counts>();
  const inFlight = new Map<number, HeldDelivery>(); // by attempt number
  const drained = new Set<() => void>();
  const validUrls = new Map<string, boolean>();
  let pending = 0;
  let pendingBytes = 0;
  let sequence = 0;
  let attempts = 0;
  let closed = false;
  // Everything due is handed over (the sender sends MAX_IN_FLIGHT at once and queues the rest), so
  // this thread does not wake for every finished attempt to feed the next one.
  const schedule = createSchedule<HeldDelivery>(clock, MAX_PENDING, start);
  const sender = (options.sender ?? ((report, lost) => createThreadSender(MAX_IN_FLIGHT, report, lost)))(
    settleAll,
    lostAll,
  );

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

  function create(
    target: string,
    url: string,
    endpoint: string | null,
    source: EventSource,
    flags: ChaosFlags,
    chaos: string[],
    dueAt: number,
    session: string,
  ): HeldDelivery {
    const delivery = new HeldDelivery(`whd_${++sequence}`, target, url, endpoint, source, flags, chaos, dueAt, session);
    log.add(delivery);
    const bytes = source.size;
    if (pending >= MAX_PENDING || pendingBytes + bytes > MAX_PENDING_BYTES) {
      // Bounded: what is already pending keeps its place; the new event is reported, not queued.
      delivery.status = 'failed';
      delivery.nextAt = null;
      delivery.error = `dropped: ${pending} deliveries (${Math.round(pendingBytes / 1024)} KiB) were already pending, the most this server holds; the event was not sent`;
      countsOf(target).failed++;
      options.onChange(delivery);
      return delivery;
    }
    pending++;
    pendingBytes += bytes;
    countsOf(target).pending++;
    options.onChange(delivery);
    schedule.add(delivery);
    return delivery;
  }

  function send(event: OutgoingEvent, afterMs: number): HeldDelivery {
    const target = options.target(event.target);
    const now = clock();
    const dataText = event.dataText ?? (JSON.stringify(event.data ?? {}) as string | undefined) ?? '{}';
    const source = new EventSource(event.envelope, event.type, now, dataText, draws.reserveEventId());
    const flags = draws.chaos(event.target, target?.chaos);
    const url = event.url ?? overrides.get(event.target)?.url ?? target?.url ?? '';
    const dueAt = now + Math.max(0, afterMs) + (flags.reorder ? REORDER_HOLD_MS : 0);
    return create(event.target, url, event.endpoint, source, flags, chaosNames(flags), dueAt, event.session ?? '');
  }

  /** Hands the due deliveries to the sender in one batch (called by the schedule, never on a request's path). */
  function start(batch: HeldDelivery[]): void {
    const requests: AttemptRequest[] = [];
    for (const delivery of batch) {
      const target = options.target(delivery.target);
      const notSent =
        target === undefined
          ? `no target "${delivery.target}" in the config now served`
          : (overrides.get(delivery.target)?.disabled ?? target.disabled)
            ? `target "${delivery.target}" is disabled`
            : !isUrl(delivery.url)
              ? `not a URL: ${JSON.stringify(delivery.url)}`
              : undefined;
      if (notSent !== undefined || target === undefined) {
        schedule.finished();
        finish(delivery, 'failed', notSent ?? '');
        continue;
      }
      const attempt = ++attempts;
      delivery.startedAt = clock();
      delivery.sentTo = target;
      inFlight.set(attempt, delivery);
      delivery.nextAt = null;
      // Signed on the real clock at each attempt: a virtual clock years away would make every signature stale.
      const timestamp = Math.floor(realClock() / 1000) - (delivery.flags.staleTimestamp ? STALE_SECONDS : 0);
      delivery.signedAt = timestamp;
      requests.push({
        id: attempt,
        url: delivery.url,
        sign: target.sign,
        source: delivery.source,
        timestamp,
        badSignature: delivery.flags.badSignature,
        timeoutMs: target.timeoutMs,
      });
    }
    if (requests.length > 0) sender.send(requests);
  }

  function settleAll(outcomes: AttemptOutcome[]): void {
    for (const outcome of outcomes) {
      const delivery = inFlight.get(outcome.id);
      if (delivery === undefined) continue;
      inFlight.delete(outcome.id);
      schedule.finished();
      if (!closed) settle(delivery, outcome);
    }
  }

  /** The sender lost every attempt it had not answered (the delivery thread stopped): each fails, and is retried on its schedule. */
  function lostAll(reason: string): void {
    settleAll(
      [...inFlight.keys()].map((id): AttemptOutcome => ({ id, signed: false, result: { error: reason, ms: 0 } })),
    );
  }

  function settle(delivery: HeldDelivery, { signed, result }: AttemptOutcome): void {
    const target = delivery.sentTo;
    // What it was signed with is what `start` sent: the target's signing then, and the same real-clock second.
    delivery.record(
      { at: delivery.startedAt, status: result.status ?? null, ms: result.ms, error: result.error ?? null },
      signed ? target?.sign : undefined,
    );
    const verdict = outcomeOf(result, delivery.attemptCount, target?.scheduleMs ?? []);
    switch (verdict.kind) {
      case 'delivered':
        finish(delivery, 'delivered', null);
        if (delivery.flags.duplicate)
          create(
            delivery.target,
            delivery.url,
            delivery.endpoint,
            delivery.source,
            { ...delivery.flags, duplicate: false, badSignature: false, staleTimestamp: false },
            DUPLICATE,
            clock(),
            delivery.session,
          );
        return;
      case 'gone':
        overrides.set(delivery.target, { ...overrides.get(delivery.target), disabled: true });
        return finish(
          delivery,
          'failed',
          `the receiver answered 410 Gone: target "${delivery.target}" is now disabled`,
        );
      case 'give-up':
        return finish(delivery, 'failed', verdict.error);
      case 'retry':
        delivery.dueAt = clock() + verdict.waitMs;
        delivery.nextAt = delivery.dueAt;
        options.onChange(delivery);
        schedule.add(delivery);
    }
  }

  function finish(delivery: HeldDelivery, status: 'delivered' | 'failed', error: string | null): void {
    delivery.status = status;
    delivery.error = error;
    delivery.nextAt = null;
    pending--;
    pendingBytes -= delivery.source.size;
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
      return create(old.target, old.url, null, old.source, CALM, [], clock(), old.session);
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

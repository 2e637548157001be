import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Clock } from '../clock.js';
import { DueQueue } from './due-queue.js';
import { createDrawStreams, type DrawStreams } from '../pipeline/failure.js';
import { attemptDelivery, type Attempt, type AttemptResult } from './attempt.js';
import type { CompiledTarget } from './compile.js';
import { idPrefix, wrapEvent } from './envelope.js';
import { DeliveryLog, type Delivery, type DeliveryFilter } from './log.js';
import { signatureHeaders } from './sign.js';
import type { Envelope } from '../config/types-webhooks.js';

/** Attempts in flight at once; the rest wait their turn. */
export const MAX_IN_FLIGHT = 32;
/** How far back a `staleTimestamp` signature is dated: past the 5 minutes receivers accept. */
export const STALE_SECONDS = 600;
/** How long a `reorder` delivery is held back (server clock), so that the next event overtakes it. */
export const REORDER_HOLD_MS = 1_000;

/** An event to send to one target. */
export interface OutgoingEvent {
  readonly type: string;
  readonly envelope: Envelope;
  readonly data: unknown;
  readonly target: string;
  /** In place of the target's URL. */
  readonly url?: string;
  readonly endpoint: string | null;
  /** Wait after now (server clock) before the first attempt. */
  readonly afterMs: number;
}

/** Per target: what the admin API changed at run time (kept across reloads). */
export interface TargetOverride {
  url?: string;
  disabled?: boolean;
}

/** Options of {@link createDispatcher}. */
export interface DispatcherOptions {
  /** The server's clock (virtual or real): contents and schedules follow it. */
  clock: Clock;
  /** The real clock: signatures follow it (a receiver compares with its own). */
  realClock?: Clock;
  /** The seed of event ids and chaos (their own streams, apart from the fail rate's). */
  seed: () => number;
  /** The target named so in the config now served. */
  target(name: string): CompiledTarget | undefined;
  /** How many deliveries the log keeps. */
  capacity: () => number;
  /** Told of every change to a delivery. */
  onChange(delivery: Delivery): void;
}

interface Job {
  readonly delivery: Delivery;
  readonly bytes: Buffer;
  readonly url: string;
  readonly badSignature: boolean;
  readonly staleTimestamp: boolean;
  readonly duplicate: boolean;
  /** Server-clock time of the next attempt. */
  dueAt: number;
  inFlight?: Attempt;
}

/** The deliveries of one server: queue, schedule on the server's clock, attempts, log. */
export interface Dispatcher {
  send(event: OutgoingEvent): Delivery;
  replay(id: string): Delivery | undefined;
  list(filter?: DeliveryFilter): Delivery[];
  /** Per target: pending, delivered and failed counts. */
  counts(): Map<string, { pending: number; delivered: number; failed: number }>;
  override(name: string, change: TargetOverride): TargetOverride;
  overrides(): ReadonlyMap<string, TargetOverride>;
  /** The server's clock moved: attempts due by the new time go now. */
  clockMoved(): void;
  /** Deliveries not finished. */
  pending(): number;
  /** Resolves once nothing is pending, or after `ms` (real time); true when nothing is. */
  drain(ms: number): Promise<boolean>;
  /** Stops every timer and attempt; what was pending stays pending. */
  close(): void;
  clear(): void;
}

/** Builds the dispatcher: at least once, retried on the target's schedule; 410 disables the target. */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { clock } = options;
  const realClock = options.realClock ?? Date.now;
  const log = new DeliveryLog(options.capacity);
  const jobs = new Set<Job>(); // every unfinished job
  const waiting = new DueQueue<Job>(); // those not in flight, by due time
  // One keep-alive agent per scheme: a delivery does not pay a new connection, and `close` ends them all.
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT }), https: new HttpsAgent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT }) };
  const overrides = new Map<string, TargetOverride>();
  const totals = new Map<string, { delivered: number; failed: number }>();
  const drained = new Set<() => void>();
  let inFlight = 0;
  let sequence = 0;
  let timer: NodeJS.Timeout | undefined;
  let timerDue = Infinity; // server-clock time the armed timer is for
  let closed = false;
  let streams: { seed: number; draws: DrawStreams } | undefined;

  const draws = (): DrawStreams => {
    const seed = options.seed();
    if (streams?.seed !== seed) streams = { seed, draws: createDrawStreams(seed) };
    return streams.draws;
  };

  function eventId(envelope: Envelope): string {
    const words = [0, 1, 2, 3].map(() => Math.floor(draws().next('webhook event id') * 2 ** 32).toString(16).padStart(8, '0'));
    if (envelope === 'github') return `${words[0]}-${words[1]!.slice(0, 4)}-4${words[1]!.slice(5, 8)}-a${words[2]!.slice(1, 4)}-${words[2]!.slice(4)}${words[3]}`;
    return `${idPrefix(envelope)}${words.join('').slice(0, 24)}`;
  }

  const chance = (kind: string, target: string, rate: number): boolean => {
    const u = draws().next(`webhook chaos ${kind} ${target}`); // drawn whatever the rate: one stream position per delivery
    return rate > 0 && u < rate;
  };

  const iso = (time: number): string => new Date(time).toISOString();
  const total = (target: string) => {
    let t = totals.get(target);
    if (t === undefined) totals.set(target, (t = { delivered: 0, failed: 0 }));
    return t;
  };

  function create(base: Omit<Delivery, 'id' | 'status' | 'attempts' | 'nextAttempt' | 'headers' | 'error'>, bytes: Buffer, url: string, flags: { badSignature: boolean; staleTimestamp: boolean; duplicate: boolean }, dueAt: number): Delivery {
    const delivery: Delivery = { id: `whd_${++sequence}`, ...base, status: 'pending', attempts: [], nextAttempt: iso(dueAt), headers: {}, error: null };
    log.add(delivery);
    const job: Job = { delivery, bytes, url, ...flags, dueAt };
    jobs.add(job);
    waiting.push(job);
    options.onChange(delivery);
    schedule(); // never on the caller's path (an answer being written): from a timer
    return delivery;
  }

  function send(event: OutgoingEvent): Delivery {
    const target = options.target(event.target);
    const now = clock();
    const id = eventId(event.envelope);
    const bytes = Buffer.from(JSON.stringify(wrapEvent(event.envelope, { id, type: event.type, created: now, data: event.data })), 'utf8');
    const rates = target?.chaos ?? { duplicate: 0, reorder: 0, badSignature: 0, staleTimestamp: 0 };
    const flags = {
      duplicate: chance('duplicate', event.target, rates.duplicate),
      reorder: chance('reorder', event.target, rates.reorder),
      badSignature: chance('badSignature', event.target, rates.badSignature),
      staleTimestamp: chance('staleTimestamp', event.target, rates.staleTimestamp),
    };
    const chaos = Object.entries(flags).filter(([, on]) => on).map(([name]) => name);
    const url = event.url ?? overrides.get(event.target)?.url ?? target?.url ?? '';
    const dueAt = now + Math.max(0, event.afterMs) + (flags.reorder ? REORDER_HOLD_MS : 0);
    return create({ event: event.type, eventId: id, target: event.target, url, endpoint: event.endpoint, body: bytes.toString('utf8'), chaos }, bytes, url, flags, dueAt);
  }

  /** Arms the one timer for the earliest due attempt (server clock, which runs at real speed between moves). */
  function schedule(): void {
    // With every slot taken, the next finished attempt runs the queue: no timer needed.
    const next = inFlight < MAX_IN_FLIGHT && !closed ? waiting.peek() : undefined;
    if (timer !== undefined && next !== undefined && timerDue <= next.dueAt) return; // armed early enough already
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    timerDue = Infinity;
    if (next === undefined) return;
    const earliest = next.dueAt;
    timerDue = earliest;
    const wait = Math.min(2 ** 31 - 1, Math.max(0, earliest - clock()));
    // Not unref'd: the listening server keeps the process alive anyway, and `close` clears it.
    timer = setTimeout(run, wait);
  }

  function run(): void {
    // Called by the timer and by whatever changed the queue: either way the armed timer is replaced.
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (closed) return;
    const now = clock();
    while (inFlight < MAX_IN_FLIGHT && (waiting.peek()?.dueAt ?? Infinity) <= now) start(waiting.pop() as Job);
    schedule();
  }

  function start(job: Job): void {
    const { delivery } = job;
    const target = options.target(delivery.target);
    const override = overrides.get(delivery.target);
    if (target === undefined) return finish(job, 'failed', `no target "${delivery.target}" in the config now served`);
    if (override?.disabled ?? target.disabled) return finish(job, 'failed', `target "${delivery.target}" is disabled`);
    let url: URL;
    try {
      url = new URL(job.url);
    } catch {
      return finish(job, 'failed', `not a URL: ${JSON.stringify(job.url)}`);
    }
    // Signed on the real clock at each attempt: a virtual clock years away would make every signature stale.
    const timestamp = Math.floor(realClock() / 1000) - (job.staleTimestamp ? STALE_SECONDS : 0);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'mockapi-webhooks',
      ...signatureHeaders(target.sign, { body: job.bytes, id: delivery.eventId, type: delivery.event, timestamp, badSignature: job.badSignature }),
    };
    delivery.headers = headers;
    delivery.nextAttempt = null;
    const time = clock();
    const attempt = attemptDelivery(url, headers, job.bytes, target.timeoutMs, url.protocol === 'https:' ? agents.https : agents.http);
    job.inFlight = attempt;
    inFlight++;
    void attempt.done.then((result) => {
      inFlight--;
      job.inFlight = undefined;
      if (closed) return;
      settle(job, target, result, time);
      run();
    });
  }

  function settle(job: Job, target: CompiledTarget, result: AttemptResult, time: number): void {
    const { delivery } = job;
    delivery.attempts.push({ time: iso(time), status: result.status ?? null, ms: result.ms, error: result.error ?? null });
    const status = result.status;
    if (status !== undefined && status >= 200 && status < 300 && result.error === undefined) {
      finish(job, 'delivered', null);
      if (job.duplicate) {
        create({ event: delivery.event, eventId: delivery.eventId, target: delivery.target, url: delivery.url, endpoint: delivery.endpoint, body: delivery.body, chaos: ['duplicate'] }, job.bytes, job.url, { badSignature: false, staleTimestamp: false, duplicate: false }, clock());
      }
      return;
    }
    if (status === 410) {
      overrides.set(delivery.target, { ...overrides.get(delivery.target), disabled: true });
      return finish(job, 'failed', `the receiver answered 410 Gone: target "${delivery.target}" is now disabled`);
    }
    const retries = delivery.attempts.length - 1;
    const wait = target.scheduleMs[retries];
    if (wait === undefined) return finish(job, 'failed', `gave up after ${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? '' : 's'}`);
    job.dueAt = clock() + (result.retryAfterMs ?? wait);
    waiting.push(job);
    delivery.nextAttempt = iso(job.dueAt);
    options.onChange(delivery);
  }

  function finish(job: Job, status: 'delivered' | 'failed', error: string | null): void {
    const { delivery } = job;
    delivery.status = status;
    delivery.error = error;
    delivery.nextAttempt = null;
    jobs.delete(job);
    total(delivery.target)[status]++;
    options.onChange(delivery);
    if (jobs.size === 0) for (const done of [...drained]) done();
  }

  return {
    send,
    replay(id) {
      const old = log.find(id);
      if (old === undefined) return undefined;
      const bytes = Buffer.from(old.body, 'utf8');
      return create({ event: old.event, eventId: old.eventId, target: old.target, url: old.url, endpoint: null, body: old.body, chaos: [] }, bytes, old.url, { badSignature: false, staleTimestamp: false, duplicate: false }, clock());
    },
    list: (filter) => log.list(filter),
    counts() {
      const counts = new Map<string, { pending: number; delivered: number; failed: number }>();
      const at = (name: string) => {
        let c = counts.get(name);
        if (c === undefined) counts.set(name, (c = { pending: 0, ...total(name) }));
        return c;
      };
      for (const name of totals.keys()) at(name);
      for (const job of jobs) at(job.delivery.target).pending++;
      return counts;
    },
    override(name, change) {
      const next = { ...overrides.get(name), ...change };
      overrides.set(name, next);
      if (change.disabled === false) run();
      return next;
    },
    overrides: () => overrides,
    clockMoved: () => run(),
    pending: () => jobs.size,
    drain(ms) {
      if (jobs.size === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(limit);
          drained.delete(done);
          resolve(jobs.size === 0);
        };
        const limit = setTimeout(done, ms);
        drained.add(done);
      });
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      for (const job of jobs) job.inFlight?.abort();
      waiting.clear();
      agents.http.destroy();
      agents.https.destroy();
      for (const done of [...drained]) done();
    },
    clear() {
      log.clear();
    },
  };
}

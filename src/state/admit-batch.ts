import type { LimitsConfig } from '../config/types.js';
import type { SettlePart } from './settle-batch.js';

/**
 * What the admit script answers for one request: outcome 0 admitted, 1 rate limited, 2 quota
 * exceeded, then the header values. With meters (see METERED_ADMIT_SCRIPT): outcome 3–5 too, then
 * the refusing meter and its wait (0, 0 when no meter refused), each meter's `used, resetMs` after
 * the request, and `countedAt`/`month`, when and in which month the call counted.
 */
export type AdmitReply = [
  outcome: number,
  limit: number,
  remaining: number,
  resetSeconds: number,
  retryAfterSeconds: number,
  ...meters: number[],
] & { countedAt?: number; month?: string };

/** The meters of a batch: their part of the script's ARGV and KEYS, the same for every request of it. */
export interface MeterBatch {
  /** Identifies the meters' settings: batches of other settings go in calls of their own. */
  readonly signature: string;
  /** M, then M quads `name, limit, window ms, period`. */
  readonly args: readonly string[];
  /** Each meter's three keys, then the key's set of meters and its audit list. */
  readonly keys: readonly string[];
  readonly count: number;
  /** Each meter's window length (ms), 0 for a month or a total: its reset once it counts something in an empty window. */
  readonly windows: readonly number[];
  /** The audit cap (0: none). */
  readonly auditCap: number;
}

/** Numbers per request in the admit script's reply (and in the metered one's, but for a meter's refusal). */
const REPLY_SIZE = 5;

/**
 * Most requests in one script call: the script decides them one after the other inside Redis,
 * which serves nobody else meanwhile, so a batch stays short; more in one turn go in several calls.
 */
export const MAX_BATCH = 256;

/**
 * Sends one admit script call: `args` is `[requests, windowMs, quota, count]`, followed, when some
 * request goes through an endpoint window, by the endpoint part of the script's ARGV (see
 * ADMIT_SCRIPT); `endpointKeys` are then the window and meta keys of each endpoint, in order (empty
 * otherwise). Resolves to the flat reply (`count` × five numbers). A reply that comes after the call
 * failed as unanswered goes to `late` instead.
 */
export type SendAdmit = (
  args: string[],
  late: (reply: unknown) => void,
  endpointKeys: string[],
  meterKeys?: readonly string[],
) => Promise<unknown>;

/** An endpoint's own window for the key, checked in the same script call as the key's. */
export interface EndpointWindowKeys {
  /** The endpoint's id (see `endpointId`), unique per endpoint. */
  id: string;
  window: string;
  meta: string;
  requests: number;
  windowMs: number;
}

interface Waiter {
  done: (reply: AdmitReply) => void;
  fail: (err: unknown) => void;
  late: ((reply: AdmitReply) => void) | undefined;
  endpoint: EndpointWindowKeys | undefined;
  /** What the request reserves on each meter of the batch (-1: not asked); undefined: none. */
  reserves: readonly number[] | undefined;
}

interface Batch {
  args: [requests: string, windowMs: string, quota: string];
  waiters: Waiter[];
  /** The endpoint windows of the batch by id: one set of limits for each in one call. */
  endpoints: Map<string, EndpointWindowKeys>;
  meters: MeterBatch | undefined;
  /** Settles of the same meters that the call carries (see METERED_ADMIT_SCRIPT). */
  settles: SettlePart[];
}

/** The admissions of one event-loop turn, gathered into one script call per set of limits. */
export interface AdmitBatcher {
  /** Queues one request's admission (through `endpoint`'s window too, when given); it is sent with the others of this turn. */
  admit(
    limits: LimitsConfig,
    late?: (reply: AdmitReply) => void,
    endpoint?: EndpointWindowKeys,
    meters?: MeterBatch,
    reserves?: readonly number[],
  ): Promise<AdmitReply>;
  /**
   * Gives settles of `meters` to an admission call of the same meters queued in this turn, which
   * applies them before its admissions; false when none is queued.
   */
  carry(meters: MeterBatch, part: SettlePart): boolean;
  /** Sends what is queued now (before a close). */
  flush(): void;
}

/** The batch key of metered limits, made once per meters' part and window (a load's limits are few): not a long string per request. */
const meteredKeys = new WeakMap<MeterBatch, { requests: number; windowMs: number; quota: number; key: string }>();
function meteredKey(requests: number, windowMs: number, quota: number, meters: MeterBatch): string {
  const known = meteredKeys.get(meters);
  if (known !== undefined && known.requests === requests && known.windowMs === windowMs && known.quota === quota)
    return known.key;
  const key = `${requests}/${windowMs}/${quota}/${meters.signature}`;
  meteredKeys.set(meters, { requests, windowMs, quota, key });
  return key;
}

/** A request's reserves as the script's ARGV; the same list as the last (an endpoint's reserves of numbers, made once) gives the same strings. */
let lastReserves: readonly number[] | undefined;
let lastTexts: string[] = [];
function reserveArgs(reserves: readonly number[]): string[] {
  if (reserves !== lastReserves) {
    lastReserves = reserves;
    lastTexts = reserves.map(String);
  }
  return lastTexts;
}

/** The plain admit script's reply: five numbers a request. Undefined when it is not that. */
function plainReplies(reply: unknown, count: number): AdmitReply[] | undefined {
  if (!Array.isArray(reply) || reply.length !== count * REPLY_SIZE) return undefined;
  const ones: AdmitReply[] = [];
  for (let i = 0; i < count; i++) ones.push(reply.slice(i * REPLY_SIZE, (i + 1) * REPLY_SIZE) as AdmitReply);
  return ones;
}

/**
 * The metered admit script's reply (see METERED_ADMIT_SCRIPT) as one AdmitReply per request. The
 * script gives each meter as the call found it; what it holds after each request follows, in order:
 * an admitted request adds each reserve it asked for (≥ 0) to its meter, and a window that held
 * nothing then resets a whole window later (the script counts so, at one time for the call).
 * Undefined when the reply does not have the script's shape.
 */
function meteredReplies(reply: unknown, waiters: readonly Waiter[], meters: MeterBatch): AdmitReply[] | undefined {
  if (!Array.isArray(reply)) return undefined;
  const list = reply as number[];
  const m = meters.count;
  const tail = list.length - 2 - 2 * m; // where the meters as found start, before the time and the month
  if (tail < 0) return undefined;
  const used: number[] = [];
  const reset: number[] = [];
  for (let i = 0; i < m; i++) (used.push(Number(list[tail + 2 * i])), reset.push(Number(list[tail + 2 * i + 1])));
  const countedAt = Number(list[tail + 2 * m]);
  const month = String(list[tail + 2 * m + 1]);
  const ones: AdmitReply[] = [];
  let at = 0;
  for (const { reserves } of waiters) {
    if (at + REPLY_SIZE > tail) return undefined;
    const outcome = list[at]!;
    const one = [outcome, list[at + 1]!, list[at + 2]!, list[at + 3]!, list[at + 4]!, 0, 0] as AdmitReply;
    at += REPLY_SIZE;
    if (outcome >= 3) {
      if (at + 2 > tail) return undefined;
      one[5] = list[at]!;
      one[6] = list[at + 1]!;
      at += 2;
    } else if (outcome === 0 && reserves !== undefined) {
      for (let i = 0; i < m; i++) {
        const q = reserves[i] ?? -1;
        if (q < 0) continue;
        used[i] = used[i]! + q;
        if (reset[i] === 0) reset[i] = meters.windows[i]!;
      }
    }
    for (let i = 0; i < m; i++) one.push(used[i]!, reset[i]!);
    one.countedAt = countedAt;
    one.month = month;
    ones.push(one);
  }
  return at === tail ? ones : undefined;
}

/**
 * Gathers the admissions asked for in one turn of the event loop — every request a server read in
 * one I/O phase — and sends them as one script call per set of limits (usually one), at the end of
 * that phase (`setImmediate`). One command instead of one per request: Redis parses, runs and
 * answers one script, reads its clock and the window once; the server sends and reads one command.
 * The requests still wait for no other I/O, and the script decides them in order, atomically, so the
 * limits stay exact across servers.
 */
export function createAdmitBatcher(
  send: SendAdmit,
  schedule: (flush: () => void) => void = setImmediate,
  settlesFor: (meters: MeterBatch) => SettlePart | undefined = () => undefined,
): AdmitBatcher {
  let batches = new Map<string, Batch>();
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const ready = batches;
    batches = new Map();
    for (const batch of ready.values()) {
      // The settles of these meters queued in this turn go with the first call.
      const taken = batch.meters === undefined ? undefined : settlesFor(batch.meters);
      if (taken !== undefined) batch.settles.push(taken);
      for (let from = 0; from < batch.waiters.length; from += MAX_BATCH)
        sendBatch(
          batch.args,
          batch.waiters.slice(from, from + MAX_BATCH),
          batch.meters,
          from === 0 ? batch.settles : [],
        );
    }
  }

  function sendBatch(
    args: Batch['args'],
    waiters: Waiter[],
    meters: MeterBatch | undefined,
    settles: readonly SettlePart[],
  ): void {
    const split = (reply: unknown): AdmitReply[] | undefined =>
      meters === undefined ? plainReplies(reply, waiters.length) : meteredReplies(reply, waiters, meters);
    const late = (reply: unknown) => split(reply)?.forEach((one, i) => waiters[i]!.late?.(one));
    const all = [...args, String(waiters.length)];
    const keys: string[] = [];
    if (meters !== undefined && !waiters.some((w) => w.endpoint !== undefined)) all.push('0');
    if (waiters.some((w) => w.endpoint !== undefined)) {
      // The endpoints this call's requests go through, numbered from 1 in the order first met.
      const numbers = new Map<string, number>();
      const triples: string[] = [];
      const through = waiters.map(({ endpoint }) => {
        if (endpoint === undefined) return '0';
        let n = numbers.get(endpoint.id);
        if (n === undefined) {
          numbers.set(endpoint.id, (n = numbers.size + 1));
          keys.push(endpoint.window, endpoint.meta);
          triples.push(endpoint.id, String(endpoint.requests), String(endpoint.windowMs));
        }
        return String(n);
      });
      all.push(String(numbers.size), ...triples, ...through);
    }
    if (meters !== undefined) {
      all.push(...meters.args);
      const none = Array.from({ length: meters.count }, () => '-1');
      for (const w of waiters) all.push(...(w.reserves === undefined ? none : reserveArgs(w.reserves)));
      all.push(String(meters.auditCap));
      if (settles.length > 0) {
        all.push(String(settles.reduce((sum, part) => sum + part.count, 0)));
        for (const part of settles) all.push(...part.args);
      }
    }
    send(all, late, keys, meters?.keys).then(
      (reply) => {
        const ones = split(reply);
        if (ones === undefined) {
          const err = new Error(
            `the admit script answered ${JSON.stringify(reply)?.slice(0, 80)} for ${waiters.length} requests`,
          );
          for (const w of waiters) w.fail(err);
          for (const part of settles) part.fail(err);
          return;
        }
        for (const part of settles) part.done();
        waiters.forEach((w, i) => w.done(ones[i]!));
      },
      (err: unknown) => {
        for (const w of waiters) w.fail(err);
        for (const part of settles) part.fail(err);
      },
    );
  }

  return {
    admit(limits, late, endpoint, meters, reserves) {
      const rate = limits.rateLimit;
      const requests = rate?.requests ?? 0;
      const windowMs = rate?.windowMs ?? 0;
      const quota = limits.monthlyQuota ?? 0;
      let key =
        meters === undefined ? `${requests}/${windowMs}/${quota}` : meteredKey(requests, windowMs, quota, meters);
      if (endpoint !== undefined) {
        // An endpoint whose window changed within the turn (a reload between two requests) goes apart.
        const known = batches.get(key)?.endpoints.get(endpoint.id);
        if (known !== undefined && (known.requests !== endpoint.requests || known.windowMs !== endpoint.windowMs))
          key += `|${endpoint.id}/${endpoint.requests}/${endpoint.windowMs}`;
      }
      return new Promise((done, fail) => {
        let batch = batches.get(key);
        if (batch === undefined) {
          batch = {
            args: [String(requests), String(windowMs), String(quota)],
            waiters: [],
            endpoints: new Map(),
            meters,
            settles: [],
          };
          batches.set(key, batch);
        }
        if (endpoint !== undefined && !batch.endpoints.has(endpoint.id)) batch.endpoints.set(endpoint.id, endpoint);
        batch.waiters.push({ done, fail, late, endpoint, reserves });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    carry(meters, part) {
      for (const batch of batches.values()) {
        if (batch.meters !== meters) continue;
        batch.settles.push(part);
        return true;
      }
      return false;
    },
    flush() {
      if (scheduled) flush();
    },
  };
}

import type { LimitsConfig } from '../config/types.js';

/**
 * What the admit script answers for one request: outcome 0 admitted, 1 rate limited, 2 quota
 * exceeded, then the header values. With meters (see METERED_ADMIT_SCRIPT): outcome 3–5 too, then
 * the refusing meter and its wait, each meter's `used, resetMs`, and `countedAt`/`month`, when and in which
 * month the call counted.
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
  /** The audit cap (0: none). */
  readonly auditCap: number;
}

/** Numbers per request in the admit script's reply. */
const REPLY_SIZE = 5;
/** Numbers per request in the metered admit script's reply, before each meter's two. */
const METERED_SIZE = 7;

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
): AdmitBatcher {
  let batches = new Map<string, Batch>();
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const ready = batches;
    batches = new Map();
    for (const batch of ready.values()) {
      for (let from = 0; from < batch.waiters.length; from += MAX_BATCH)
        sendBatch(batch.args, batch.waiters.slice(from, from + MAX_BATCH), batch.meters);
    }
  }

  function sendBatch(args: Batch['args'], waiters: Waiter[], meters: MeterBatch | undefined): void {
    const size = meters === undefined ? REPLY_SIZE : METERED_SIZE + 2 * meters.count;
    const expected = waiters.length * size + (meters === undefined ? 0 : 2);
    const part = (reply: unknown, i: number): AdmitReply => {
      const one = (reply as number[]).slice(i * size, (i + 1) * size) as AdmitReply;
      if (meters !== undefined) {
        one.countedAt = Number((reply as unknown[])[expected - 2]);
        one.month = String((reply as unknown[])[expected - 1]);
      }
      return one;
    };
    const late = (reply: unknown) => waiters.forEach((w, i) => w.late?.(part(reply, i)));
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
    }
    send(all, late, keys, meters?.keys).then(
      (reply) => {
        if (!Array.isArray(reply) || reply.length !== expected) {
          const err = new Error(
            `the admit script answered ${JSON.stringify(reply)?.slice(0, 80)} for ${waiters.length} requests`,
          );
          for (const w of waiters) w.fail(err);
          return;
        }
        waiters.forEach((w, i) => w.done(part(reply, i)));
      },
      (err: unknown) => {
        for (const w of waiters) w.fail(err);
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
    flush() {
      if (scheduled) flush();
    },
  };
}

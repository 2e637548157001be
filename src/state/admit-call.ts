/**
 * One admit script call: what it carries (a batch's meters, the endpoints' windows, each waiting
 * request), its ARGV, and its reply split into one {@link AdmitReply} per request.
 */
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

/** An endpoint's own window for the key, checked in the same script call as the key's. */
export interface EndpointWindowKeys {
  /** The endpoint's id (see `endpointId`), unique per endpoint. */
  id: string;
  window: string;
  meta: string;
  requests: number;
  windowMs: number;
}

/** A request waiting in a batch for its call's reply. */
export interface Waiter {
  done: (reply: AdmitReply) => void;
  fail: (err: unknown) => void;
  late: ((reply: AdmitReply) => void) | undefined;
  endpoint: EndpointWindowKeys | undefined;
  /** What the request reserves on each meter of the batch (-1: not asked); undefined: none. */
  reserves: readonly number[] | undefined;
}

/** Numbers per request in the admit script's reply (and in the metered one's, but for a meter's refusal). */
const REPLY_SIZE = 5;

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
 * The ARGV of one admit script call (see ADMIT_SCRIPT, METERED_ADMIT_SCRIPT): `[requests, windowMs,
 * quota]`, the number of requests, the endpoint part, the meters' part with each request's reserves,
 * and the settles the call carries; the endpoints' window and meta keys go into `keys`.
 */
export function admitArgs(
  args: readonly string[],
  waiters: readonly Waiter[],
  meters: MeterBatch | undefined,
  settles: readonly SettlePart[],
  keys: string[],
): string[] {
  const all = [...args, String(waiters.length)];
  if (meters !== undefined && !waiters.some((w) => w.endpoint !== undefined)) all.push('0');
  if (waiters.some((w) => w.endpoint !== undefined)) endpointArgs(waiters, all, keys);
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
  return all;
}

/** The endpoints a call's requests go through, numbered from 1 in the order first met: their part of `all`, their window and meta keys into `keys`. */
function endpointArgs(waiters: readonly Waiter[], all: string[], keys: string[]): void {
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

/** The plain admit script's reply: five numbers a request. Undefined when it is not that. */
export function plainReplies(reply: unknown, count: number): AdmitReply[] | undefined {
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
export function meteredReplies(
  reply: unknown,
  waiters: readonly Waiter[],
  meters: MeterBatch,
): AdmitReply[] | undefined {
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

/**
 * The admissions of one event-loop turn gathered into one script call per set of limits (see
 * createAdmitBatcher); one call's ARGV and its reply split per request are in admit-call.ts.
 */
import type { LimitsConfig } from '../config/types.js';
import {
  admitArgs,
  meteredReplies,
  plainReplies,
  type AdmitReply,
  type EndpointWindowKeys,
  type MeterBatch,
  type Waiter,
} from './admit-call.js';
import type { SettlePart } from './settle-batch.js';

export type { AdmitReply, EndpointWindowKeys, MeterBatch } from './admit-call.js';

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
    const keys: string[] = [];
    const all = admitArgs(args, waiters, meters, settles, keys);
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

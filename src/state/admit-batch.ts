import type { LimitsConfig } from '../config/types.js';

/** What the admit script answers for one request: outcome 0 admitted, 1 rate limited, 2 quota exceeded, then the header values. */
export type AdmitReply = [outcome: number, limit: number, remaining: number, resetSeconds: number, retryAfterSeconds: number];

/** Numbers per request in the admit script's reply. */
const REPLY_SIZE = 5;

/**
 * Most requests in one script call: the script decides them one after the other inside Redis,
 * which serves nobody else meanwhile, so a batch stays short; more in one turn go in several calls.
 */
export const MAX_BATCH = 256;

/**
 * Sends one admit script call: `args` is `[requests, windowMs, quota, count]`. Resolves to the flat
 * reply (`count` × five numbers). A reply that comes after the call failed as unanswered goes to
 * `late` instead.
 */
export type SendAdmit = (args: string[], late: (reply: unknown) => void) => Promise<unknown>;

interface Waiter {
  done: (reply: AdmitReply) => void;
  fail: (err: unknown) => void;
  late: ((reply: AdmitReply) => void) | undefined;
}

interface Batch {
  args: [requests: string, windowMs: string, quota: string];
  waiters: Waiter[];
}

/** The admissions of one event-loop turn, gathered into one script call per set of limits. */
export interface AdmitBatcher {
  /** Queues one request's admission; it is sent with the others of this turn. */
  admit(limits: LimitsConfig, late?: (reply: AdmitReply) => void): Promise<AdmitReply>;
  /** Sends what is queued now (before a close). */
  flush(): void;
}

/**
 * Gathers the admissions asked for in one turn of the event loop — every request a server read in
 * one I/O phase — and sends them as one script call per set of limits (usually one), at the end of
 * that phase (`setImmediate`). One command instead of one per request: Redis parses, runs and
 * answers one script, reads its clock and the window once; the server sends and reads one command.
 * The requests still wait for no other I/O, and the script decides them in order, atomically, so the
 * limits stay exact across servers.
 */
export function createAdmitBatcher(send: SendAdmit, schedule: (flush: () => void) => void = setImmediate): AdmitBatcher {
  let batches = new Map<string, Batch>();
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const ready = batches;
    batches = new Map();
    for (const batch of ready.values()) {
      for (let from = 0; from < batch.waiters.length; from += MAX_BATCH) sendBatch(batch.args, batch.waiters.slice(from, from + MAX_BATCH));
    }
  }

  function sendBatch(args: Batch['args'], waiters: Waiter[]): void {
    const part = (reply: unknown, i: number) => (reply as number[]).slice(i * REPLY_SIZE, (i + 1) * REPLY_SIZE) as AdmitReply;
    const late = (reply: unknown) => waiters.forEach((w, i) => w.late?.(part(reply, i)));
    send([...args, String(waiters.length)], late).then(
      (reply) => {
        if (!Array.isArray(reply) || reply.length !== waiters.length * REPLY_SIZE) {
          const err = new Error(`the admit script answered ${JSON.stringify(reply)?.slice(0, 80)} for ${waiters.length} requests`);
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
    admit(limits, late) {
      const rate = limits.rateLimit;
      const requests = rate?.requests ?? 0;
      const windowMs = rate?.windowMs ?? 0;
      const quota = limits.monthlyQuota ?? 0;
      const key = `${requests}/${windowMs}/${quota}`;
      return new Promise((done, fail) => {
        let batch = batches.get(key);
        if (batch === undefined) {
          batch = { args: [String(requests), String(windowMs), String(quota)], waiters: [] };
          batches.set(key, batch);
        }
        batch.waiters.push({ done, fail, late });
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

/**
 * The limit store's commands over one client: a deadline for each without a timer of its own,
 * EVALSHA with EVAL when Redis lacks the script, and the turn's count call kept before the
 * commands sent after it.
 */
import { createCountBatcher, type CountBatcher } from './count-batch.js';
import type { Client } from './redis-client.js';
import { SCRIPTS } from './store-scripts.js';

/** What {@link storeCommands} makes: the two ways to send, the count batcher, and the deadlines' sweep. */
export interface StoreCommands {
  send(args: string[], late?: (reply: unknown) => void): Promise<unknown>;
  /** EVALSHA, and EVAL when Redis does not have the script yet (a restart empties its cache). */
  run(
    script: { sha: string; source: string },
    keysAndArgs: string[],
    late?: (reply: unknown) => void,
  ): Promise<unknown>;
  readonly counts: CountBatcher;
  /** The timer that fails commands past their deadline (cleared on close). */
  readonly sweep: ReturnType<typeof setInterval>;
}

/** The commands over `client`, each failed after `timeout` ms without an answer; counts go to `usageKey`. */
export function storeCommands(client: Client, timeout: number, usageKey: string): StoreCommands {
  // A deadline for every command without a timer of its own: the node-redis `timeout` option
  // makes an AbortSignal and a timer per command, about 5 % of a request's CPU. Commands are
  // kept in the order they were sent, so one sweep looks at the oldest ones only.
  // `expired`: failed by the sweep; a reply that still comes goes to the command's `late`.
  const waiting = new Set<{ deadline: number; fail: (err: Error) => void; expired: boolean }>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const entry of waiting) {
        if (entry.deadline > now) break;
        waiting.delete(entry);
        entry.expired = true;
        entry.fail(new Error(`no answer within ${timeout} ms`));
      }
    },
    Math.min(250, timeout),
  );
  sweep.unref();
  function send(args: string[], late?: (reply: unknown) => void): Promise<unknown> {
    counts.closeBefore(args); // a count call open in this turn stays before this command
    return new Promise((done, fail) => {
      const entry = { deadline: Date.now() + timeout, fail, expired: false };
      waiting.add(entry);
      client.sendCommand(args).then(
        (reply) => {
          waiting.delete(entry);
          if (entry.expired)
            late?.(reply); // already failed as unanswered: Redis ran it after all
          else done(reply);
        },
        (err: unknown) => {
          waiting.delete(entry);
          fail(err);
        },
      );
    });
  }
  /** EVALSHA, and EVAL when Redis does not have the script yet (a restart empties its cache). */
  async function run(
    script: { sha: string; source: string },
    keysAndArgs: string[],
    late?: (reply: unknown) => void,
  ): Promise<unknown> {
    try {
      return await send(['EVALSHA', script.sha, ...keysAndArgs], late);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return send(['EVAL', script.source, ...keysAndArgs], late);
    }
  }
  const counts = createCountBatcher(send, SCRIPTS.count, usageKey);
  return { send, run, counts, sweep };
}

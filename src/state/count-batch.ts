/** How a count call went: `counted`; `failed` (not counted: the caller keeps them); `late`, counted by Redis after the call had failed as unanswered. */
export type CountTold = (n: number, outcome: 'counted' | 'failed' | 'late', reason?: string) => void;

/**
 * Sends one command; a reply that comes after the command failed as unanswered goes to `late`. The
 * array is the client's until it writes the command: changed until then, it is written as changed.
 */
export type SendCount = (args: string[], late: (reply: unknown) => void) => Promise<unknown>;

/** The counts of one event-loop turn, in one count call (COUNT_SCRIPT). */
export interface CountBatcher {
  /** Counts one request: in the call open in this turn, else in a new one handed to the client at once. */
  count(told: CountTold): void;
  /** Another command of the store is being sent: the open call (unless it is `args`) takes no more counts, so it stays before that command. */
  closeBefore(args: readonly string[]): void;
}

const COUNT_AT = 4;

/**
 * Count calls of `usageKey`: the first count of a turn opens a call and hands it to the client at
 * once, so it goes out before the answers of the turn (which wait for its end); later counts of
 * the turn raise its number until the client writes it (it encodes a command when it writes it).
 * The script answers the number it got: counts added after the write go in another call. A Redis
 * without the script (fresh, or flushed) gets the same count again with the script's source.
 */
export function createCountBatcher(
  send: SendCount,
  script: { sha: string; source: string },
  usageKey: string,
  turnEnd: (close: () => void) => void = setImmediate,
): CountBatcher {
  let open: { args: string[]; n: number } | undefined;

  function sendCall(call: { args: string[]; n: number }, told: CountTold): void {
    send(call.args, (reply) => told(Number(reply) || 0, 'late')).then(
      (reply) => {
        const carried = Math.min(Number(reply) || 0, call.n);
        told(carried, 'counted');
        for (let i = carried; i < call.n; i++) batcher.count(told);
      },
      (err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        // (its number is final by then: the call was written, so closed, before its reply came)
        if (reason.startsWith('NOSCRIPT') && call.args[0] === 'EVALSHA')
          return sendCall({ args: ['EVAL', script.source, '1', usageKey, String(call.n)], n: call.n }, told);
        told(call.n, 'failed', reason);
      },
    );
  }

  const batcher: CountBatcher = {
    count(told) {
      if (open !== undefined) {
        open.args[COUNT_AT] = String(++open.n);
        return;
      }
      const call = { args: ['EVALSHA', script.sha, '1', usageKey, '1'], n: 1 };
      sendCall(call, told);
      open = call;
      // Closed after the client's own end-of-turn write, which sending scheduled before this.
      turnEnd(() => {
        if (open === call) open = undefined;
      });
    },
    closeBefore(args) {
      if (open !== undefined && open.args !== args) open = undefined;
    },
  };
  return batcher;
}

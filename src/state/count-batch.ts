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
const COUNT_KEY = String(COUNT_AT);

/**
 * Count calls of `usageKey`: the first count of a turn opens a call and hands it to the client at
 * once; later counts of the turn raise its number until the client writes it (it encodes a
 * command when it writes it, reading the count then: that read closes the call). The script
 * answers the number it got: any count it did not carry goes in another call. A Redis
 * without the script (fresh, or flushed) gets the same count again with the script's source.
 */
export function createCountBatcher(
  send: SendCount,
  script: { sha: string; source: string },
  usageKey: string,
  turnEnd: (close: () => void) => void = setImmediate,
): CountBatcher {
  /** `args` is what the client is handed (a proxy); `raw`, the array behind it, takes the raised counts. */
  let open: { args: string[]; raw: string[]; n: number } | undefined;

  const close = (call: { args: string[] }): void => {
    if (open === call) open = undefined;
  };

  function sendCall(call: { args: string[]; n: number }, told: CountTold): void {
    send(call.args, (reply) => told(Number(reply) || 0, 'late')).then(
      (reply) => {
        close(call); // answered: nothing more joins it (a count raised after its write goes below)
        const held = call.n;
        const carried = Math.min(Number(reply) || 0, held);
        told(carried, 'counted');
        for (let i = carried; i < held; i++) batcher.count(told);
      },
      (err: unknown) => {
        close(call);
        const reason = err instanceof Error ? err.message : String(err);
        if (reason.startsWith('NOSCRIPT') && call.args[0] === 'EVALSHA')
          return sendCall({ args: ['EVAL', script.source, '1', usageKey, String(call.n)], n: call.n }, told);
        told(call.n, 'failed', reason);
      },
    );
  }

  /**
   * A call's arguments, closed to more counts the moment the client reads its count to encode
   * it: a count can never be raised on a call already written. (A client that read it at once
   * would make each count a call of its own: slower, never wrong.)
   */
  function callArgs(call: { args: string[] }, args: string[]): string[] {
    return new Proxy(args, {
      get(target, key, receiver) {
        if (key === COUNT_KEY) close(call);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  }

  const batcher: CountBatcher = {
    count(told) {
      if (open !== undefined) {
        // Into the array itself: a write through the proxy (which has no `set`) takes V8's slow
        // path, a few µs a request; its `get` reads the new count from the array all the same.
        open.raw[COUNT_AT] = String(++open.n);
        return;
      }
      const raw = ['EVALSHA', script.sha, '1', usageKey, '1'];
      const call = { args: raw, raw, n: 1 };
      call.args = callArgs(call, raw);
      open = call; // before sending: a client that reads the count at once closes it at once
      sendCall(call, told);
      // Closed at the end of the turn at the latest (the client writes it then, or earlier).
      turnEnd(() => close(call));
    },
    closeBefore(args) {
      if (open !== undefined && open.args !== args) open = undefined;
    },
  };
  return batcher;
}

/** What stops a started part of a server (a listener, a timer, a file kept open). */
export type Stop = () => void | Promise<void>;

/**
 * The stops of a server's parts, each pushed as its part starts: a failed start and `close()` run
 * them in reverse order of starting, so a part stops before what it uses.
 */
export interface StopStack {
  push(stop: Stop): void;
  /** Runs every stop, the last pushed first, each once; one that throws keeps none of the others from running, and the first error is thrown at the end. */
  unwind(): Promise<void>;
}

export function createStopStack(): StopStack {
  const stops: Stop[] = [];
  return {
    push(stop) {
      stops.push(stop);
    },
    async unwind() {
      let failure: { error: unknown } | undefined;
      for (let stop = stops.pop(); stop !== undefined; stop = stops.pop()) {
        try {
          await stop();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure !== undefined) throw failure.error;
    },
  };
}

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createLocalSender, type AttemptOutcome, type AttemptSender } from './sender.js';
import { decodeOutcomes, encodeRequests, type OutcomeMessage } from './thread-wire.js';

/**
 * The compiled delivery thread. The same path from tsc's dist/webhooks/ and from the CLI bundle in
 * dist/cli/; from TypeScript sources (tests run them) there is none, and attempts run in this thread.
 */
const THREAD_FILE = new URL('../webhooks/delivery-worker.js', import.meta.url);

/**
 * Sends attempts from a thread of their own (started on the first attempt), so that signing and
 * HTTP to receivers never compete with the answers of the server's thread: that thread only hands
 * over each turn's due attempts in one message and records the outcomes that come back. Where the
 * thread cannot run (no compiled file, or it stopped), attempts run in this thread instead; `lost`
 * is told when the thread stops, and the attempts it had not answered fail with the reason and are
 * retried on their schedule.
 */
export function createThreadSender(
  maxSockets: number,
  report: (outcomes: AttemptOutcome[]) => void,
  lost: (reason: string) => void,
): AttemptSender {
  let thread: Worker | undefined;
  let local: AttemptSender | undefined;
  let closed = false;

  const inThisThread = (): AttemptSender => (local ??= createLocalSender(maxSockets, report));

  function start(): Worker | undefined {
    if (local !== undefined) return undefined;
    if (!existsSync(fileURLToPath(THREAD_FILE))) return void inThisThread();
    try {
      const worker = new Worker(THREAD_FILE, { workerData: { maxSockets }, stdout: false, stderr: false });
      worker.unref(); // the server's own handles keep the process alive; `close` ends the thread
      worker.on('message', (message: OutcomeMessage) => {
        if (!closed) report(decodeOutcomes(message));
      });
      // From now on attempts run in this thread; those the thread had not answered fail (and are
      // retried): every attempt still out went to the thread, since none has run here yet.
      let stopped = false;
      const stop = (reason: string): void => {
        if (stopped) return; // `error` and then `exit`: once
        stopped = true;
        thread = undefined;
        if (closed) return;
        inThisThread();
        lost(`the delivery thread stopped: ${reason}`);
      };
      worker.on('error', (err) => stop(err.message));
      worker.on('exit', (code) => stop(`exit code ${code}`));
      return worker;
    } catch {
      return void inThisThread();
    }
  }

  return {
    send(batch) {
      if (closed || batch.length === 0) return;
      thread ??= start();
      if (thread === undefined) return inThisThread().send(batch);
      thread.postMessage(encodeRequests(batch)); // numbers in one array, each text once: far cheaper to copy than objects
    },
    close() {
      closed = true;
      local?.close();
      void thread?.terminate();
      thread = undefined;
    },
  };
}

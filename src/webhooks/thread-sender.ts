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
 * thread cannot run (no compiled file, or it stopped), attempts run in this thread instead; the
 * attempts the thread had not answered fail with the reason and are retried on their schedule.
 */
export function createThreadSender(maxSockets: number, report: (outcomes: AttemptOutcome[]) => void): AttemptSender {
  let thread: Worker | undefined;
  let local: AttemptSender | undefined;
  let closed = false;
  const unanswered = new Set<number>(); // attempt ids the thread has not answered: numbers, no objects kept

  const inThisThread = (): AttemptSender => (local ??= createLocalSender(maxSockets, report));

  function lost(reason: string): void {
    thread = undefined;
    const failed = [...unanswered].map((id): AttemptOutcome => ({ id, signed: false, result: { error: `the delivery thread stopped: ${reason}`, ms: 0 } }));
    unanswered.clear();
    if (!closed && failed.length > 0) report(failed);
  }

  function start(): Worker | undefined {
    if (local !== undefined) return undefined;
    if (!existsSync(fileURLToPath(THREAD_FILE))) return void inThisThread();
    try {
      const worker = new Worker(THREAD_FILE, { workerData: { maxSockets }, stdout: false, stderr: false });
      worker.unref(); // the server's own handles keep the process alive; `close` ends the thread
      worker.on('message', (message: OutcomeMessage) => {
        const outcomes = decodeOutcomes(message);
        for (const outcome of outcomes) unanswered.delete(outcome.id);
        if (!closed) report(outcomes);
      });
      // From now on attempts run in this thread; those the thread had not answered fail (and are retried).
      const stopped = (reason: string): void => {
        if (!closed) inThisThread();
        lost(reason);
      };
      worker.on('error', (err) => stopped(err.message));
      worker.on('exit', (code) => stopped(`exit code ${code}`));
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
      for (const request of batch) unanswered.add(request.id);
      thread.postMessage(encodeRequests(batch)); // one text: far cheaper to copy than objects or lists
    },
    close() {
      closed = true;
      local?.close();
      void thread?.terminate();
      thread = undefined;
      unanswered.clear();
    },
  };
}

// The delivery thread: signs and sends the attempts the server's dispatcher hands it, and reports
// their outcomes back, so that no receiver's HTTP work runs in the thread that answers requests.
// Started by src/webhooks/thread-sender.ts; holds no state of its own beyond the sockets.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createLocalSender } from './sender.js';
import { decodeRequests, encodeOutcomes, type RequestMessage } from './thread-wire.js';

/**
 * How much nicer than the server this thread runs (Linux): answers first. Where cores are free this changes nothing;
 * where they are all busy (a load test on a small machine), the thread that answers requests gets
 * the CPU first and deliveries go on in what it leaves, instead of taking half of it (pending
 * deliveries stay bounded; they catch up when the load stops).
 */
export const DELIVERY_THREAD_NICER = 10;

/** Lowers this thread's priority alone: on Linux, a thread's id names the thread to setpriority(2). */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + DELIVERY_THREAD_NICER));
  } catch {
    // Not Linux, or not allowed: the thread runs at the server's priority.
  }
}

const port = parentPort;
if (port !== null) {
  lowerPriority();
  const sender = createLocalSender((workerData as { maxSockets: number }).maxSockets, (outcomes) => port.postMessage(encodeOutcomes(outcomes)));
  port.on('message', (message: RequestMessage) => sender.send(decodeRequests(message)));
}

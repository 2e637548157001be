// The delivery thread: signs and sends the attempts the server's dispatcher hands it, and reports
// their outcomes back, so that no receiver's HTTP work runs in the thread that answers requests.
// Started by src/webhooks/thread-sender.ts; holds no state of its own beyond the sockets.
import { parentPort, workerData } from 'node:worker_threads';
import { createLocalSender } from './sender.js';
import { decodeRequests, encodeOutcomes, type RequestMessage } from './thread-wire.js';

const port = parentPort;
if (port !== null) {
  const sender = createLocalSender((workerData as { maxSockets: number }).maxSockets, (outcomes) =>
    port.postMessage(encodeOutcomes(outcomes)),
  );
  port.on('message', (message: RequestMessage) => sender.send(decodeRequests(message)));
}

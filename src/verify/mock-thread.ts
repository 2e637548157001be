import { parentPort, workerData } from 'node:worker_threads';
import { startMockServer } from '../mock-server.js';
import { injectTarget } from './inject.js';
import type { Sent } from './targets.js';
import type { MockThreadData, ThreadAnswer, ThreadRequest, WireAnswer, WireRequest } from './mock-host.js';

/**
 * The thread a verify run serves its mock from (see mock-host.ts): starts the mock on a loopback
 * port with the run's config, then, given every example at once, asks the mock each of them
 * (`connections` at a time, in order) and hands the answers back in batches — the mock's whole
 * pipeline and both ends of its HTTP run here, beside the main thread's requests to the real API
 * and its comparisons, for a few messages per run rather than two per example.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  const data = workerData as MockThreadData;
  let server: Awaited<ReturnType<typeof startMockServer>>;
  let handler: Parameters<typeof injectTarget>[0] | undefined;
  try {
    server = await startMockServer({
      config: data.served,
      port: 0,
      host: '127.0.0.1',
      watch: false,
      state: false,
      log: 'off',
      onHandler: (h) => (handler = h),
    });
  } catch (err) {
    const issues = (err as { issues?: Array<{ message: string }> }).issues;
    port.postMessage({
      kind: 'failed',
      message: issues === undefined ? (err as Error).message : issues.map((i) => i.message).join('; '),
    } satisfies ThreadAnswer);
    return;
  }
  const target = injectTarget(handler!, data.basePath, data.apiKey, data.timeoutMs);
  let batch: WireAnswer[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (batch.length === 0) return;
    const answers = batch;
    batch = [];
    port.postMessage(
      { kind: 'answers', answers } satisfies ThreadAnswer,
      answers.flatMap((a) => (a.ok ? [a.body.buffer as ArrayBuffer] : [])),
    );
  };
  const done = (index: number, sent: Sent): void => {
    // A copy of its own (not a view of a pooled slab), handed over without another copy.
    // Of the headers, the content type alone: all a comparison reads of the mock's answer (the rest would only be copied across).
    batch.push(
      sent.ok
        ? {
            index,
            ok: true,
            status: sent.reply.status,
            headers: sent.reply.headers.filter(([name]) => name === 'content-type'),
            body: new Uint8Array(sent.reply.body),
          }
        : { index, ok: false, reason: sent.reason },
    );
    if (batch.length >= 64) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  port.on('message', (message: ThreadRequest) => {
    if (message.kind === 'close') {
      void Promise.allSettled([target.close(), server.close()]).then(() => port.close());
      return;
    }
    const { requests } = message;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < requests.length) {
        const index = next++;
        const { body, ...rest } = requests[index] as WireRequest;
        done(index, await target.send({ ...rest, ...(body === undefined ? {} : { body: Buffer.from(body) }) }));
      }
    };
    void Promise.all(Array.from({ length: Math.max(1, Math.min(data.connections, requests.length)) }, worker)).then(
      flush,
    );
  });
  port.postMessage({ kind: 'ready' } satisfies ThreadAnswer);
}

void main();

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ExampleRequest } from './request.js';
import { injectTarget } from './inject.js';
import type { Sent, Target } from './targets.js';

/**
 * The compiled mock thread: the same path from tsc's dist/verify/ and from the CLI bundle in
 * dist/cli/; from TypeScript sources (tests that import them) there is none, and the mock is served
 * in this thread.
 */
const THREAD_FILE = new URL('../verify/mock-thread.js', import.meta.url);
/** The same thread in one file (scripts/bundle.mjs), preferred when built: it starts without loading its modules one by one. */
const THREAD_BUNDLE = new URL('../verify/mock-thread.bundle.cjs', import.meta.url);

/** What the mock thread starts with. */
export interface MockThreadData {
  served: Record<string, unknown>;
  apiKey: string;
  basePath: string;
  /** Examples the mock is asked at once. */
  connections: number;
  /** How long one of its answers may take. */
  timeoutMs: number;
}

/** An example as it crosses to the mock thread. */
export type WireRequest = Omit<ExampleRequest, 'body'> & { body?: Uint8Array };
/** A mock answer as it comes back, by the example's position. */
export type WireAnswer =
  | { index: number; ok: true; status: number; headers: Array<[string, string]>; body: Uint8Array }
  | { index: number; ok: false; reason: string };

/** What the main thread tells the mock thread: every example of the run at once, then close. */
export type ThreadRequest = { kind: 'ask'; requests: WireRequest[] } | { kind: 'close' };

/** What the mock thread tells the main thread. */
export type ThreadAnswer =
  { kind: 'ready' } | { kind: 'failed'; message: string } | { kind: 'answers'; answers: WireAnswer[] };

/** The mock as a run uses it: told every example first (`prepare`), then asked each one's answer. */
export interface MockHost extends Target {
  prepare(requests: readonly ExampleRequest[]): void;
}

/** The mock in this thread (no compiled thread file): `prepare` does nothing, each answer is asked when wanted. */
async function inThisThread(data: MockThreadData): Promise<MockHost> {
  const { startMockServer } = await import('../mock-server.js');
  let handler: Parameters<typeof injectTarget>[0] | undefined;
  const server = await startMockServer({
    config: data.served,
    port: 0,
    host: '127.0.0.1',
    watch: false,
    state: false,
    log: 'off',
    onHandler: (h) => (handler = h),
  });
  const target = injectTarget(handler!, data.basePath, data.apiKey, data.timeoutMs);
  return {
    prepare: () => undefined,
    send: (request) => target.send(request),
    close: async () => {
      await target.close();
      await server.close();
    },
  };
}

const toSent = (a: WireAnswer): Sent =>
  a.ok
    ? {
        ok: true,
        reply: {
          status: a.status,
          headers: a.headers,
          body: Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength),
        },
      }
    : { ok: false, reason: a.reason };

/**
 * Serves the mock of a verify run from a thread of its own, so that its pipeline and its HTTP never
 * compete with the requests to the real API and the comparisons: resolves once it listens. Told
 * every example in one message (`prepare`), the thread asks the mock each of them and sends the
 * answers back in batches; `send` resolves with the answer to an example given to `prepare`.
 * Rejects with the reason when the mock cannot start.
 */
export function startMockHost(data: MockThreadData): Promise<MockHost> {
  if (!existsSync(fileURLToPath(THREAD_FILE))) return inThisThread(data);
  return new Promise((resolveStart, rejectStart) => {
    const worker = new Worker(existsSync(fileURLToPath(THREAD_BUNDLE)) ? THREAD_BUNDLE : THREAD_FILE, {
      workerData: data,
    });
    const positions = new Map<ExampleRequest, number>();
    const arrived = new Map<number, Sent>();
    const waiting = new Map<number, (sent: Sent) => void>();
    let started = false;
    let gone: string | undefined;
    const stop = (reason: string): void => {
      if (gone !== undefined) return;
      gone = reason;
      if (!started) rejectStart(new Error(reason));
      for (const done of waiting.values()) done({ ok: false, reason: `the mock did not answer: ${reason}` });
      waiting.clear();
    };
    worker.on('message', (message: ThreadAnswer) => {
      if (message.kind === 'ready') {
        started = true;
        resolveStart(host);
      } else if (message.kind === 'failed') stop(message.message);
      else {
        for (const answer of message.answers) {
          const done = waiting.get(answer.index);
          waiting.delete(answer.index);
          if (done === undefined) arrived.set(answer.index, toSent(answer));
          else done(toSent(answer));
        }
      }
    });
    worker.on('error', (err) => stop(err.message));
    worker.on('exit', (code) => stop(`its thread ended (exit code ${code})`));
    const host: MockHost = {
      prepare(requests) {
        requests.forEach((r, i) => positions.set(r, i));
        worker.postMessage({
          kind: 'ask',
          requests: requests.map(({ body, ...rest }) => ({
            ...rest,
            ...(body === undefined ? {} : { body: new Uint8Array(body) }),
          })),
        } satisfies ThreadRequest);
      },
      send(request) {
        const index = positions.get(request);
        if (index === undefined) return Promise.resolve({ ok: false, reason: 'the mock was not told of this example' });
        const known = arrived.get(index);
        if (known !== undefined) {
          arrived.delete(index);
          return Promise.resolve(known);
        }
        if (gone !== undefined) return Promise.resolve({ ok: false, reason: `the mock did not answer: ${gone}` });
        return new Promise<Sent>((done) => waiting.set(index, done));
      },
      close() {
        if (gone !== undefined) return Promise.resolve();
        return new Promise<void>((done) => {
          worker.once('exit', () => done());
          worker.postMessage({ kind: 'close' } satisfies ThreadRequest);
        });
      },
    };
  });
}

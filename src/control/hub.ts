import type { KeyMatcher } from '../pipeline/auth.js';
import { NO_REDACTOR } from '../redact/redactor.js';
import type { ControlPlane } from './control-plane.js';
import type { ClientReport, ClientTracker } from './early-retries.js';
import { isHubMessage, type HubOp, type ToPrimary, type ToWorker } from './hub-messages.js';
import { viewEntry, type JournalEntry, type RawEntry } from './journal-entry.js';
import type { Journal } from './journal.js';

/** What the admin API needs to answer for the whole server rather than for this process. */
export interface Fleet {
  /** Resolves once every entry any worker recorded before this call is in this worker's journal. */
  sync(): Promise<void>;
  /** Runs `op` on every other worker; resolves once all of them did. */
  others(op: HubOp): Promise<void>;
  /** Every other worker's clients given a Retry-After (SPEC §10), one list per worker. */
  clients(): Promise<ClientReport[][]>;
}

/** A `serve --workers` worker's end of the hub: see {@link joinHub}. */
export interface WorkerHub extends Fleet {
  /** The journal's `forward`: sends the entry's redacted view to the primary, which numbers it. */
  forward(entry: RawEntry): void;
  /** Starts taking the primary's entries into `journal` and its calls to `plane`. */
  attach(journal: Journal, plane: ControlPlane): void;
  /**
   * The tracker this worker uses: what it gives is also told to every other worker (sent before
   * the answer is written, see handler.ts), and what they give is heard here, so an early retry is
   * noticed on whichever worker the client comes back to.
   */
  shareClients(tracker: ClientTracker): ClientTracker;
  /** Sends this worker's clients to the primary as it stops, which prints one summary for the server; resolves once sent. */
  final(clients: ClientReport[]): Promise<void>;
  /** Stops listening; pending calls resolve (the server is stopping). */
  close(): void;
}

// A mirrored entry's view is built already: the matchers are never read.
const NO_KEY: KeyMatcher = { digest: '' };

/** A journal entry of any worker, as received: its view is kept, the fields the filters read are filled from it. */
function mirrored(view: JournalEntry): RawEntry {
  return {
    id: view.id,
    time: Date.parse(view.time),
    method: view.method,
    url: view.path,
    rawHeaders: [],
    body: undefined,
    bodyTruncated: view.bodyTruncated,
    endpoint: view.endpoint,
    response: view.response,
    status: view.status,
    ms: view.ms,
    step: view.step,
    note: view.notes[0],
    key: NO_KEY,
    previousKey: undefined,
    answerHeaders: [],
    answerBody: undefined,
    answerBodyTruncated: view.responseBodyTruncated,
    redactor: NO_REDACTOR, // the view came built (and scrubbed) from the worker that answered
    view,
  };
}

/**
 * In a worker of `serve --workers` (SPEC §12): every journal entry goes to the primary, which gives
 * it the server-wide next id and sends it to every worker, this one included; so each worker's
 * journal mirrors the whole server's, and queries, waits and event streams are answered locally,
 * event-driven. The IPC channel is FIFO each way, which gives the two guarantees the admin API
 * needs: `sync` (the primary asks every other worker to answer and then answers; whatever they had
 * sent before arrives first) makes a query see every request already answered anywhere, and
 * `others` applies writes everywhere before the admin call answers. Undefined outside a worker.
 */
export function joinHub(): WorkerHub | undefined {
  const send = process.send?.bind(process);
  if (send === undefined) return undefined;
  const post = (message: ToPrimary): void => {
    if (process.connected) send(message);
  };
  let journal: Journal | undefined;
  let plane: ControlPlane | undefined;
  let tracker: ClientTracker | undefined;
  let nextCall = 0;
  const pending = new Map<number, (clients: ClientReport[][]) => void>();

  const apply = (op: HubOp): void => {
    if (op.op === 'clear') journal?.clear();
    else if (op.op === 'reset') plane?.resetHere(op.parts); // the worker that took the call reset the shared store
    else if (op.op === 'scenario') plane?.setScenario(op.name, op.state);
  };
  const onMessage = (message: unknown): void => {
    if (!isHubMessage(message)) return;
    const m = message as ToWorker;
    if (m.type === 'mockapi:entry') journal?.add(mirrored(m.entry));
    else if (m.type === 'mockapi:gave') tracker?.heard(m.client, m.value, m.now);
    else if (m.type === 'mockapi:done') {
      pending.get(m.call)?.(m.clients ?? []);
      pending.delete(m.call);
    } else if (m.type === 'mockapi:apply') {
      if (m.op.op === 'clients') return post({ type: 'mockapi:applied', call: m.call, clients: tracker?.list() ?? [] });
      try {
        apply(m.op);
      } finally {
        // The caller validated the call on its own config first; a worker that refuses it still answers.
        post({ type: 'mockapi:applied', call: m.call });
      }
    }
  };
  const release = (): void => {
    for (const done of pending.values()) done([]);
    pending.clear();
  };
  const call = (op: HubOp): Promise<ClientReport[][]> => {
    if (!process.connected) return Promise.resolve([]);
    const id = ++nextCall;
    return new Promise((done) => {
      pending.set(id, done);
      post({ type: 'mockapi:call', call: id, op });
    });
  };

  return {
    forward: (entry) => post({ type: 'mockapi:entry', entry: viewEntry(entry), at: monotonicMs() }),
    sync: () => call({ op: 'sync' }).then(nothing),
    others: (op) => call(op).then(nothing),
    clients: () => call({ op: 'clients' }),
    shareClients(own) {
      tracker = own;
      return {
        ...own,
        gave(client, value, now) {
          own.gave(client, value, now);
          post({ type: 'mockapi:gave', client, value, now });
        },
      };
    },
    final: (clients) =>
      new Promise((done) => {
        // Sent before the worker lets go of its channel: the primary reads it before the channel's end.
        if (process.connected) send({ type: 'mockapi:final', clients } satisfies ToPrimary, () => done());
        else done();
      }),
    attach(j, p) {
      journal = j;
      plane = p;
      process.on('message', onMessage);
      process.on('disconnect', release);
    },
    close() {
      process.off('message', onMessage);
      process.off('disconnect', release);
      release();
    },
  };
}

function nothing(): void {}

/** CLOCK_MONOTONIC in ms: one clock for every process of the machine, unlike performance.now(). */
function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

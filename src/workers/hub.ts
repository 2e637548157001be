import type { KeyMatcher } from '../pipeline/auth.js';
import { NO_REDACTOR } from '../redact/redactor.js';
import type { ControlPlane, EndpointCounts } from '../control/control-plane.js';
import type { ClientReport, ClientTracker } from '../control/early-retries.js';
import { workerIdsFromEnv, MAX_SLOTS, type WorkerIds } from './ids.js';
import { heldPart, journalPart, mergeParts } from './journal-parts.js';
import {
  isHubMessage,
  type EndpointsPart,
  type HeldPart,
  type JournalPart,
  type ToPrimary,
  type ToWorker,
} from './hub-messages.js';
import type { HubOp, WorkersLink } from '../control/other-workers.js';
import { viewEntry, type JournalEntry, type RawEntry } from '../control/journal-entry.js';
import type { Journal, RequestFilter } from '../control/journal.js';
import { waitForEntries, type WorkersWatch, type WaitOptions } from '../control/wait.js';
import { createTellings } from './hub-tellings.js';
import { createEntryFlow } from './hub-flow.js';

/** A `serve --workers` worker's end of the hub: see {@link joinHub}. */
export interface WorkerHub extends WorkersLink {
  /** The journal's ids: see ids.ts. */
  readonly ids: WorkerIds;
  /**
   * The tracker this worker uses: a Retry-After it gives is told to the other workers when the moment
   * it names moved by more than a second since the last one told for that client (never on every
   * answer), and what they tell is heard here, so an early retry is noticed on whichever worker the
   * client comes back to.
   */
  shareClients(tracker: ClientTracker): ClientTracker;
  /** Sends this worker's clients to the primary as it stops, which prints one summary for the server; resolves once sent. */
  final(clients: ClientReport[]): Promise<void>;
  /** Stops listening; pending calls resolve (the server is stopping). */
  close(): void;
}

// A mirrored entry's view is built already: the matchers are never read.
const NO_KEY: KeyMatcher = { digest: '', short: '' };

/** A journal entry of another worker (or fleet host), as received: its view is kept, the fields the filters read are filled from it. */
export function mirrored(view: JournalEntry): RawEntry {
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
    violations: view.violations,
    note: view.notes,
    key: NO_KEY,
    previousKey: undefined,
    sessionKey: undefined,
    keyVerdict: undefined,
    answerHeaders: [],
    answerBody: undefined,
    answerBodyTruncated: view.responseBodyTruncated,
    redactor: NO_REDACTOR, // the view came built (and scrubbed) from the worker that answered
    view,
  };
}

/**
 * In a worker of `serve --workers`: nothing crosses the IPC channel on a mock request's
 * path. Each worker numbers and keeps its own entries (ids.ts); an admin query asks every other
 * worker, through the primary, for its part and merges them; a wait or an event stream has the
 * other workers forward their entries only while it is open. Writes (clear, reset, scenario) are
 * applied everywhere before the admin call answers. Undefined outside a worker.
 */
export function joinHub(): WorkerHub | undefined {
  const send = process.send?.bind(process);
  const ids = workerIdsFromEnv(process.env);
  if (send === undefined || ids === undefined) return undefined;
  const post = (message: ToPrimary): void => {
    if (process.connected) send(message);
  };
  let journal: Journal | undefined;
  let plane: ControlPlane | undefined;
  let tracker: ClientTracker | undefined;
  let nextCall = 0;
  const pending = new Map<number, (results: unknown[]) => void>();
  let stopForwarding: (() => void) | undefined;

  // While another worker watches: this worker's own entries go to the primary, which hands them to
  // the watchers; one message per event-loop turn, and a bounded number on their way (hub-flow.ts).
  const flow = createEntryFlow((entries, done) => {
    if (process.connected) send({ type: 'mockapi:entries', entries } satisfies ToPrimary, done);
    else done();
  });
  let outbox: JournalEntry[] = [];
  const flushOutbox = (): void => {
    const entries = outbox;
    outbox = [];
    flow.send(entries);
  };
  const forward = (on: boolean): void => {
    if (on && stopForwarding === undefined && journal !== undefined) {
      stopForwarding = journal.listen((entry, heard) => {
        if (!heard && outbox.push(viewEntry(entry)) === 1) setImmediate(flushOutbox);
      });
    } else if (!on && stopForwarding !== undefined) {
      stopForwarding();
      stopForwarding = undefined;
    }
  };
  const apply = (op: HubOp): unknown => {
    if (op.op === 'query')
      return journal === undefined ? undefined : journalPart(journal, op.filter, op.cutoff, op.entries);
    if (op.op === 'watch') return journal === undefined ? undefined : heldPart(journal, op.filter, ids.last());
    if (op.op === 'endpoints') return journal === undefined ? undefined : endpointsPart(journal);
    if (op.op === 'clients') return tracker?.list() ?? [];
    if (op.op === 'clear') journal?.clear();
    else if (op.op === 'reset')
      // The worker that took the call reset the shared store, or wrote the month's reset to the state files.
      return plane?.followReset(op.parts).then(nothing);
    else if (op.op === 'scenario') plane?.setScenario(op.name, op.state);
    else if (op.op === 'states')
      // An answer's setState on another worker: a scenario a reload dropped here is skipped, not an error.
      for (const [name, state] of op.moves) {
        try {
          plane?.setScenario(name, state);
        } catch {
          // (no scenario of that name in this worker's config)
        }
      }
    return undefined;
  };
  const onMessage = (message: unknown): void => {
    if (!isHubMessage(message)) return;
    const m = message as ToWorker;
    if (m.type === 'mockapi:entries') for (const entry of m.entries) journal?.hear(mirrored(entry));
    else if (m.type === 'mockapi:forward') forward(m.on);
    else if (m.type === 'mockapi:gave') tracker?.heard(m.client, m.value, m.now);
    else if (m.type === 'mockapi:done') {
      pending.get(m.call)?.(m.results);
      pending.delete(m.call);
    } else if (m.type === 'mockapi:apply') {
      let result: unknown;
      try {
        result = apply(m.op);
      } finally {
        // The caller validated the call on its own config first; a worker that refuses it still answers.
        // (A reset answers once this worker took the month from its state files.)
        if (result instanceof Promise)
          void result.then(
            (value: unknown) => post({ type: 'mockapi:applied', call: m.call, result: value }),
            () => post({ type: 'mockapi:applied', call: m.call }),
          );
        else post({ type: 'mockapi:applied', call: m.call, result });
      }
    }
  };
  const release = (): void => {
    for (const done of pending.values()) done([]);
    pending.clear();
  };
  /** Runs `op` on every other worker; resolves with their results (none once the channel is gone). */
  const call = <T>(op: HubOp): Promise<T[]> => {
    if (!process.connected) return Promise.resolve([]);
    const id = ++nextCall;
    return new Promise((done) => {
      pending.set(id, (results) => done(results.filter((r) => r !== undefined && r !== null) as T[]));
      post({ type: 'mockapi:call', call: id, op });
    });
  };
  const query = async (filter: RequestFilter, entries: boolean) => {
    const own = journal!;
    const cutoff = ids.cutoff(); // before asking: see WorkerIds.cutoff
    const others = call<JournalPart>({ op: 'query', filter, cutoff, entries });
    const mine = journalPart(own, filter, cutoff, entries);
    return mergeParts([mine, ...(await others)], filter, own.capacity);
  };
  const workersWatch: WorkersWatch = {
    watch(filter) {
      const held = call<HeldPart>({ op: 'watch', filter }).then((parts) => {
        const last = new Map<number, number>();
        for (const part of parts) if (part.last >= 0) last.set(part.last % MAX_SLOTS, part.last);
        return {
          entries: parts.flatMap((part) => part.entries.map(mirrored)),
          isNew: (entry: RawEntry) => entry.id > (last.get(entry.id % MAX_SLOTS) ?? -1),
        };
      });
      return { held, stop: () => post({ type: 'mockapi:unwatch' }) };
    },
  };
  const tellings = createTellings();

  return {
    ids,
    requests: async (filter) => (await query(filter, true)).entries,
    count: async (filter) => (await query(filter, false)).count,
    async endpointCounts() {
      const others = call<EndpointsPart>({ op: 'endpoints' });
      const parts = journal === undefined ? [] : [endpointsPart(journal)];
      return addEndpointParts([...parts, ...(await others)]);
    },
    waitFor: (filter, options, signal) => waitForEntries(journal!, filter, options, signal, workersWatch),
    async watch() {
      await call({ op: 'watch', filter: undefined });
      return () => post({ type: 'mockapi:unwatch' });
    },
    async others(op) {
      // A reset: this worker's is in its state files before the others take it from there.
      if (op.op === 'reset') await plane?.writeReset();
      await call(op);
    },
    clients: () => call<ClientReport[]>({ op: 'clients' }),
    shareClients(own) {
      tracker = own;
      return {
        ...own,
        gave(client, value, now) {
          own.gave(client, value, now);
          // Sent before the answer is written, so the client's retry, on a new connection to another
          // worker, finds it heard there; but only when the moment moved (see hub-tellings.ts).
          if (tellings.worthTelling(client, value, now)) post({ type: 'mockapi:gave', client, value, now });
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
      forward(false);
      process.off('message', onMessage);
      process.off('disconnect', release);
      release();
    },
  };
}

function nothing(): void {}

/** This worker's requests per endpoint and per answer, as sent to the worker that asks. */
function endpointsPart(journal: Journal): EndpointsPart {
  return {
    endpoints: [...journal.endpointCounts()],
    answers: [...journal.answerCounts()].map(([endpoint, byName]) => [endpoint, [...byName]]),
  };
}

/** Every worker's parts, added up. */
function addEndpointParts(parts: readonly EndpointsPart[]): EndpointCounts {
  const endpoints = new Map<string, number>();
  const answers = new Map<string, Map<string, number>>();
  for (const part of parts) {
    for (const [key, n] of part.endpoints) endpoints.set(key, (endpoints.get(key) ?? 0) + n);
    for (const [key, byName] of part.answers) {
      let sum = answers.get(key);
      if (sum === undefined) answers.set(key, (sum = new Map()));
      for (const [name, n] of byName) sum.set(name, (sum.get(name) ?? 0) + n);
    }
  }
  return { endpoints, answers };
}

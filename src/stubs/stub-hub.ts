import type { Worker } from 'node:cluster';
import type { StubChange } from './operations.js';
import type { StubRecord } from './store.js';

/*
 * Stubs across the workers of `serve --workers` (node:cluster), over the IPC channel beside the
 * journal's hub (control/hub.ts). A change (add, remove, clear) goes through the primary to every
 * other worker, and the call answers once all of them applied it: every worker serves a stub from
 * the moment the call returns. The primary keeps the stubs, so a worker that replaces a dead one
 * gets them, and owns the remaining count of each stub with `times`: a worker that matches such a
 * stub asks the primary for one of its answers (one round trip, only for those stubs), so `times`
 * is exact across workers. A stub whose count runs out is removed from every worker.
 */

/** Worker → primary. */
type ToPrimary =
  | { type: 'mockapi:stubs'; call: number; change: StubChange }
  | { type: 'mockapi:stubs-applied'; call: number }
  | { type: 'mockapi:stub-claim'; call: number; id: string }
  | { type: 'mockapi:stub-counts'; call: number };

/** Primary → worker. */
type ToWorker =
  | { type: 'mockapi:stubs-apply'; call: number; change: StubChange }
  | { type: 'mockapi:stubs-done'; call: number }
  | { type: 'mockapi:stub-claimed'; call: number; left: number | null }
  | { type: 'mockapi:stub-counted'; call: number; counts: [string, number][] };

const TYPES = new Set([
  'mockapi:stubs',
  'mockapi:stubs-applied',
  'mockapi:stub-claim',
  'mockapi:stub-counts',
  'mockapi:stubs-apply',
  'mockapi:stubs-done',
  'mockapi:stub-claimed',
  'mockapi:stub-counted',
]);

function isStubMessage(message: unknown): message is ToPrimary | ToWorker {
  return typeof message === 'object' && message !== null && TYPES.has((message as { type?: unknown }).type as string);
}

/** The primary's end: see {@link createStubPrimary}. */
export interface StubPrimary {
  /** Handles a worker's message; false when it is not about stubs. */
  receive(worker: Worker, message: unknown): boolean;
  /** A worker that answers requests: it gets every stub now served, and takes part in every change. */
  join(worker: Worker): void;
  leave(worker: Worker): void;
  /** Forgets every stub (a reset with part `stubs` reached every worker through the journal's hub). */
  clear(): void;
}

/** The primary's registry of stubs and of the remaining counts of stubs with `times`. */
export function createStubPrimary(): StubPrimary {
  const members = new Set<Worker>();
  const records = new Map<string, StubRecord>();
  const remaining = new Map<string, number>();
  const pending = new Map<number, { from: Worker; call: number; waiting: Set<Worker> }>();
  let nextCall = 0;

  const send = (worker: Worker, message: ToWorker): void => {
    if (worker.isConnected()) worker.send(message, () => {}); // a worker gone meanwhile needs nothing more
  };
  const settle = (id: number): void => {
    const p = pending.get(id);
    if (p === undefined || p.waiting.size > 0) return;
    pending.delete(id);
    send(p.from, { type: 'mockapi:stubs-done', call: p.call });
  };
  const remember = (change: StubChange): void => {
    if (change.op === 'stub-add') {
      records.set(change.record.id, change.record);
      if (change.record.times !== null) remaining.set(change.record.id, change.record.times);
    } else if (change.op === 'stub-remove') {
      records.delete(change.id);
      remaining.delete(change.id);
    } else {
      records.clear();
      remaining.clear();
    }
  };
  /** Applies a change on every worker but `from`; answers `from` once all did. */
  const spread = (from: Worker | undefined, call: number, change: StubChange): void => {
    remember(change);
    const id = ++nextCall;
    const waiting = new Set([...members].filter((w) => w !== from && w.isConnected()));
    for (const member of waiting) send(member, { type: 'mockapi:stubs-apply', call: id, change });
    if (from === undefined) return;
    pending.set(id, { from, call, waiting });
    settle(id);
  };

  return {
    receive(worker, message) {
      if (!isStubMessage(message)) return false;
      const m = message as ToPrimary;
      if (m.type === 'mockapi:stubs') spread(worker, m.call, m.change);
      else if (m.type === 'mockapi:stubs-applied') {
        if (pending.get(m.call)?.waiting.delete(worker)) settle(m.call);
      } else if (m.type === 'mockapi:stub-claim') {
        const left = remaining.get(m.id);
        if (left === undefined || left <= 0)
          return (send(worker, { type: 'mockapi:stub-claimed', call: m.call, left: null }), true);
        remaining.set(m.id, left - 1);
        send(worker, { type: 'mockapi:stub-claimed', call: m.call, left: left - 1 });
        // Used up: no worker may match it any more (the one that took the last answer removes it itself).
        if (left - 1 === 0) spread(undefined, 0, { op: 'stub-remove', id: m.id });
      } else if (m.type === 'mockapi:stub-counts')
        send(worker, { type: 'mockapi:stub-counted', call: m.call, counts: [...remaining] });
      return true;
    },
    join(worker) {
      members.add(worker);
      const ordered = [...records.values()].sort((a, b) => a.seq - b.seq);
      for (const record of ordered)
        send(worker, { type: 'mockapi:stubs-apply', call: 0, change: { op: 'stub-add', record } });
    },
    leave(worker) {
      members.delete(worker);
      for (const [id, p] of pending) {
        if (p.from === worker) pending.delete(id);
        else if (p.waiting.delete(worker)) settle(id);
      }
    },
    clear() {
      records.clear();
      remaining.clear();
    },
  };
}

/** A worker's end: see {@link joinStubHub}. */
export interface StubWorkerHub {
  /** Applies a change on every other worker; resolves once all did. */
  replicate(change: StubChange): Promise<void>;
  /** Takes one answer of a stub with `times`: the count left after it, or null when none was left. */
  claim(id: string): Promise<number | null>;
  /** The remaining counts of the stubs with `times`, as the primary keeps them. */
  counts(): Promise<Map<string, number>>;
  close(): void;
}

/** In a `serve --workers` worker: joins the primary's stub registry; `apply` runs the other workers' changes here. */
export function joinStubHub(apply: (change: StubChange) => Promise<void>): StubWorkerHub | undefined {
  const send = process.send?.bind(process);
  if (send === undefined) return undefined;
  let nextCall = 0;
  const waiting = new Map<number, (answer: ToWorker) => void>();
  const ask = (message: (call: number) => ToPrimary): Promise<ToWorker | undefined> => {
    if (!process.connected) return Promise.resolve(undefined);
    const call = ++nextCall;
    return new Promise((done) => {
      waiting.set(call, done);
      send(message(call));
    });
  };
  const onMessage = (message: unknown): void => {
    if (!isStubMessage(message)) return;
    const m = message as ToWorker;
    if (m.type === 'mockapi:stubs-apply') {
      void apply(m.change)
        .catch(() => {}) // the worker that took the call checked it; one that cannot build it still answers
        .finally(() => {
          if (m.call !== 0 && process.connected)
            send({ type: 'mockapi:stubs-applied', call: m.call } satisfies ToPrimary);
        });
      return;
    }
    waiting.get(m.call)?.(m);
    waiting.delete(m.call);
  };
  const release = (): void => {
    for (const done of waiting.values()) done({ type: 'mockapi:stub-claimed', call: 0, left: null });
    waiting.clear();
  };
  process.on('message', onMessage);
  process.on('disconnect', release);
  return {
    replicate: async (change) => {
      await ask((call) => ({ type: 'mockapi:stubs', call, change }));
    },
    claim: async (id) => {
      const answer = await ask((call) => ({ type: 'mockapi:stub-claim', call, id }));
      return answer?.type === 'mockapi:stub-claimed' ? answer.left : null;
    },
    counts: async () => {
      const answer = await ask((call) => ({ type: 'mockapi:stub-counts', call }));
      return new Map(answer?.type === 'mockapi:stub-counted' ? answer.counts : []);
    },
    close() {
      process.off('message', onMessage);
      process.off('disconnect', release);
      release();
    },
  };
}

import type { Worker } from 'node:cluster';
import { isHubMessage, type ToPrimary, type ToWorker } from './hub-messages.js';
import type { ClientReport } from './early-retries.js';
import type { JournalEntry } from './journal-entry.js';

/** The primary's end of the hub: see {@link createPrimaryHub}. */
export interface PrimaryHub {
  /** Handles a worker's message; false when it is not the hub's. */
  receive(worker: Worker, message: unknown): boolean;
  /** A worker that answers requests: from now on it gets every entry and takes part in every call. */
  join(worker: Worker): void;
  /** A worker that is gone: calls stop waiting for it. */
  leave(worker: Worker): void;
  /** The clients each stopped worker sent as it stopped (SPEC §10), for the one stop summary. */
  finals(): ClientReport[][];
}

interface Pending {
  from: Worker;
  call: number;
  waiting: Set<Worker>;
  /** The other workers' clients, for a `clients` call. */
  clients: ClientReport[][] | undefined;
}

/**
 * The hub of `serve --workers` (SPEC §12) in the primary. It numbers every worker's journal
 * entries (ids increase across the whole server) and sends each to every worker; and it runs a
 * worker's admin call on every other worker, answering the caller once all of them applied it.
 * Entries and answers share each worker's FIFO channel, so an entry numbered before a call's
 * answer reaches the caller before that answer.
 */
export function createPrimaryHub(): PrimaryHub {
  const members = new Set<Worker>();
  const pending = new Map<number, Pending>();
  const finals: ClientReport[][] = [];
  let lastId = 0;
  let nextCall = 0;

  const send = (worker: Worker, message: ToWorker): void => {
    // A worker may close its channel (stopping, dying) between the check and the write; the
    // callback takes that EPIPE, which would otherwise be an 'error' event that ends the primary.
    if (worker.isConnected()) worker.send(message, ignoreGone);
  };
  const settle = (id: number, p: Pending): void => {
    if (p.waiting.size > 0) return;
    pending.delete(id);
    send(p.from, { type: 'mockapi:done', call: p.call, clients: p.clients });
  };

  // Entries are numbered at the end of the event loop's turn that received them, in the order the
  // workers answered: a worker sends its entry before it writes the answer, so an entry sent after
  // another was answered reaches this process later — but not always on an earlier turn, and within
  // one turn the channels are read in no particular order (level-triggered epoll keeps a channel read
  // last time ahead of one that became readable since).
  let batch: { at: number; entry: JournalEntry }[] = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    const answered = batch.sort((x, y) => x.at - y.at);
    batch = [];
    for (const { entry } of answered) {
      const numbered = { ...entry, id: ++lastId };
      for (const member of members) send(member, { type: 'mockapi:entry', entry: numbered });
    }
  };

  return {
    receive(worker, message) {
      if (!isHubMessage(message)) return false;
      const m = message as ToPrimary;
      if (m.type === 'mockapi:entry') {
        if (batch.length === 0) setImmediate(flush);
        batch.push({ at: m.at, entry: m.entry });
        return true;
      }
      if (m.type === 'mockapi:gave') {
        for (const member of members) if (member !== worker) send(member, m);
        return true;
      }
      if (m.type === 'mockapi:final') {
        finals.push(m.clients);
        return true;
      }
      // Whatever a worker sent before a call is numbered and shared before the call goes on (FIFO).
      flush();
      if (m.type === 'mockapi:call') {
        const id = ++nextCall;
        const p: Pending = { from: worker, call: m.call, clients: m.op.op === 'clients' ? [] : undefined, waiting: new Set([...members].filter((w) => w !== worker && w.isConnected())) };
        pending.set(id, p);
        for (const member of p.waiting) send(member, { type: 'mockapi:apply', call: id, op: m.op });
        settle(id, p);
      } else if (m.type === 'mockapi:applied') {
        const p = pending.get(m.call);
        if (p === undefined) return true;
        if (p.waiting.delete(worker) && m.clients !== undefined) p.clients?.push(m.clients);
        settle(m.call, p);
      }
      return true;
    },
    join(worker) {
      flush(); // a worker gets the entries numbered from its joining on, as before
      members.add(worker);
    },
    leave(worker) {
      flush();
      members.delete(worker);
      for (const [id, p] of pending) {
        if (p.from === worker) pending.delete(id);
        else if (p.waiting.delete(worker)) settle(id, p);
      }
    },
    finals: () => finals,
  };
}

/** What a send to a worker that has gone away ends in: nothing to do, that worker needs no more messages. */
function ignoreGone(): void {}

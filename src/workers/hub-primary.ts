import type { Worker } from 'node:cluster';
import { isHubMessage, type ToPrimary, type ToWorker } from './hub-messages.js';
import type { ClientReport } from '../control/early-retries.js';
import { createEntryFlow, type EntryFlow } from './hub-flow.js';

/** The primary's end of the hub: see {@link createPrimaryHub}. */
export interface PrimaryHub {
  /** Handles a worker's message; false when it is not the hub's. */
  receive(worker: Worker, message: unknown): boolean;
  /** A worker that answers requests: from now on it takes part in every call. */
  join(worker: Worker): void;
  /** A worker that is gone: calls stop waiting for it, its watches end. */
  leave(worker: Worker): void;
  /** The clients each stopped worker sent as it stopped, for the one stop summary. */
  finals(): ClientReport[][];
}

interface Pending {
  from: Worker;
  call: number;
  waiting: Set<Worker>;
  results: unknown[];
}

/**
 * The hub of `serve --workers` in the primary: a relay for the rare calls. It runs a
 * worker's admin call on every other worker and answers the caller with their results once all of
 * them answered; it tells workers to forward their journal entries while another worker watches
 * (an open wait or event stream), and hands those entries to the watchers (a bounded number of
 * batches on their way to each); and it passes a
 * Retry-After told by one worker to the others. A mock request sends it nothing.
 */
export function createPrimaryHub(): PrimaryHub {
  const members = new Set<Worker>();
  const pending = new Map<number, Pending>();
  const finals: ClientReport[][] = [];
  /** Open watches per worker. */
  const watches = new Map<Worker, number>();
  /** The workers told to forward their entries. */
  const forwarding = new Set<Worker>();
  let nextCall = 0;

  const send = (worker: Worker, message: ToWorker): void => {
    // A worker may close its channel (stopping, dying) between the check and the write; the
    // callback takes that EPIPE, which would otherwise be an 'error' event that ends the primary.
    if (worker.isConnected()) worker.send(message, ignoreGone);
  };
  const settle = (id: number, p: Pending): void => {
    if (p.waiting.size > 0) return;
    pending.delete(id);
    send(p.from, { type: 'mockapi:done', call: p.call, results: p.results });
  };
  /** A worker forwards its entries while some other worker watches. */
  const updateForwarding = (): void => {
    for (const member of members) {
      const on = [...watches.keys()].some((watcher) => watcher !== member);
      if (on === forwarding.has(member)) continue;
      if (on) forwarding.add(member);
      else forwarding.delete(member);
      send(member, { type: 'mockapi:forward', on });
    }
  };
  /** Entries relayed to a watcher: a bounded number of batches on their way (hub-flow.ts). */
  const flows = new Map<Worker, EntryFlow>();
  const flowTo = (watcher: Worker): EntryFlow => {
    let flow = flows.get(watcher);
    if (flow === undefined) {
      flow = createEntryFlow((entries, done) => {
        if (watcher.isConnected()) watcher.send({ type: 'mockapi:entries', entries } satisfies ToWorker, done);
        else done();
      });
      flows.set(watcher, flow);
    }
    return flow;
  };
  const unwatch = (worker: Worker): void => {
    const n = (watches.get(worker) ?? 0) - 1;
    if (n > 0) watches.set(worker, n);
    else watches.delete(worker);
    updateForwarding();
  };

  return {
    receive(worker, message) {
      if (!isHubMessage(message)) return false;
      const m = message as ToPrimary;
      if (m.type === 'mockapi:entries') {
        for (const watcher of watches.keys()) if (watcher !== worker) flowTo(watcher).send(m.entries);
      } else if (m.type === 'mockapi:gave') {
        for (const member of members) if (member !== worker) send(member, m);
      } else if (m.type === 'mockapi:final') {
        finals.push(m.clients);
      } else if (m.type === 'mockapi:unwatch') {
        unwatch(worker);
      } else if (m.type === 'mockapi:call') {
        if (m.op.op === 'watch') {
          // Told to forward before they are asked what they hold: no entry falls between the two.
          watches.set(worker, (watches.get(worker) ?? 0) + 1);
          updateForwarding();
        }
        const id = ++nextCall;
        const p: Pending = {
          from: worker,
          call: m.call,
          results: [],
          waiting: new Set([...members].filter((w) => w !== worker && w.isConnected())),
        };
        pending.set(id, p);
        for (const member of p.waiting) send(member, { type: 'mockapi:apply', call: id, op: m.op });
        settle(id, p);
      } else if (m.type === 'mockapi:applied') {
        const p = pending.get(m.call);
        if (p === undefined) return true;
        if (p.waiting.delete(worker)) p.results.push(m.result);
        settle(m.call, p);
      }
      return true;
    },
    join(worker) {
      members.add(worker);
      updateForwarding();
    },
    leave(worker) {
      members.delete(worker);
      forwarding.delete(worker);
      flows.delete(worker);
      if (watches.delete(worker)) updateForwarding();
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

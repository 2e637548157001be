import type { ChildProcess } from 'node:child_process';
import cluster, { type Worker } from 'node:cluster';

/**
 * node:cluster's round-robin primary accepts each connection itself and hands it to a worker
 * (lib/internal/cluster/round_robin_handle.js): it sends the handle over IPC with a message
 * `{ cmd: 'NODE_CLUSTER', act: 'newconn', seq }` and keeps its own copy open until the worker's
 * reply `{ ack: seq, accepted }` comes back (accepted: the copy is closed; not: the connection is
 * handed to another worker). A worker killed (SIGKILL, a crash) between the two never replies: the
 * primary's copy stays open for ever and the client waits on a connection nobody reads.
 *
 * This watches each worker's handoffs: when the worker exits with some unanswered, each gets the
 * reply a worker that is shutting down gives (`accepted: false`), through the primary's own reply
 * path, so node:cluster hands the connection to a live worker; with no worker left to take it,
 * the connection is closed instead, which the client sees at once.
 */
export function guardHandoffs(worker: Worker): void {
  const proc = worker.process as ChildProcess & { send: (...args: unknown[]) => boolean };
  const pending = new Map<number, { close?: () => void }>();
  const send = proc.send.bind(proc);
  proc.send = (message: unknown, handle?: unknown, ...rest: unknown[]): boolean => {
    const m = message as { cmd?: unknown; act?: unknown; seq?: unknown } | null;
    if (
      m !== null &&
      typeof m === 'object' &&
      m.cmd === 'NODE_CLUSTER' &&
      m.act === 'newconn' &&
      typeof m.seq === 'number' &&
      handle !== undefined &&
      handle !== null
    ) {
      pending.set(m.seq, handle as { close?: () => void });
    }
    return send(message, handle, ...rest);
  };
  proc.on('internalMessage', (message: { cmd?: unknown; ack?: unknown } | null) => {
    if (
      message !== null &&
      typeof message === 'object' &&
      message.cmd === 'NODE_CLUSTER' &&
      typeof message.ack === 'number'
    )
      pending.delete(message.ack);
  });
  // Registered after node:cluster's own 'exit' listener (fork adds it first): the worker has left
  // the round-robin list by now, so a connection given back goes to another.
  proc.once('exit', () => {
    // Only a worker already listening takes a connection given back (a replacement just forked has not joined yet).
    const others = Object.values(cluster.workers ?? {}).some(
      (w) => w !== undefined && w !== worker && (w as Worker & { state?: string }).state === 'listening',
    );
    for (const [seq, handle] of pending) {
      if (others) proc.emit('internalMessage', { cmd: 'NODE_CLUSTER', ack: seq, accepted: false }, undefined);
      else handle.close?.();
    }
    pending.clear();
  });
}

import type { ResetParts } from './control-plane.js';
import type { JournalEntry } from './journal-entry.js';

/**
 * What `serve --workers` workers and their primary say to each other over the cluster IPC channel
 * so that the journal and the admin API cover every worker (SPEC §12). Entries travel as their
 * redacted view: the API key never crosses the channel.
 */
export type HubOp = { op: 'sync' } | { op: 'clear' } | { op: 'reset'; parts: ResetParts } | { op: 'scenario'; name: string; state: string };

/** Worker → primary: an entry to number and share; an admin call to run on every other worker; an applied call. */
export type ToPrimary =
  /** `at`: when the worker answered, on the machine's monotonic clock (the same in every process). */
  | { type: 'mockapi:entry'; entry: JournalEntry; at: number }
  | { type: 'mockapi:call'; call: number; op: HubOp }
  | { type: 'mockapi:applied'; call: number };

/** Primary → worker: a numbered entry (every worker's, its own included); a call to apply; a call of its own done. */
export type ToWorker =
  | { type: 'mockapi:entry'; entry: JournalEntry }
  | { type: 'mockapi:apply'; call: number; op: HubOp }
  | { type: 'mockapi:done'; call: number };

const TYPES = new Set(['mockapi:entry', 'mockapi:call', 'mockapi:applied', 'mockapi:apply', 'mockapi:done']);

/** Whether `message` is one of the hub's (the channel also carries node:cluster's own and the ready/stop messages). */
export function isHubMessage(message: unknown): message is ToPrimary | ToWorker {
  return typeof message === 'object' && message !== null && TYPES.has((message as { type?: unknown }).type as string);
}

import type { ResetParts } from './control-plane.js';
import type { ClientReport } from './early-retries.js';
import type { JournalEntry } from './journal-entry.js';

/**
 * What `serve --workers` workers and their primary say to each other over the cluster IPC channel
 * so that the journal and the admin API cover every worker (SPEC §12). Entries travel as their
 * redacted view: the API key never crosses the channel.
 */
export type HubOp = { op: 'sync' } | { op: 'clients' } | { op: 'clear' } | { op: 'reset'; parts: ResetParts } | { op: 'scenario'; name: string; state: string };

/** A Retry-After a worker gave a client (SPEC §10), `now` on that worker's clock: every other worker hears of it. */
export interface GaveMessage {
  type: 'mockapi:gave';
  client: string;
  value: string;
  now: number;
}

/**
 * Worker → primary: an entry to number and share; an admin call to run on every other worker; an
 * applied call (with the worker's clients for a `clients` call); a Retry-After given; the worker's
 * clients as it stops, for the one stop summary.
 */
export type ToPrimary =
  /** `at`: when the worker answered, on the machine's monotonic clock (the same in every process). */
  | { type: 'mockapi:entry'; entry: JournalEntry; at: number }
  | { type: 'mockapi:call'; call: number; op: HubOp }
  | { type: 'mockapi:applied'; call: number; clients?: ClientReport[] }
  | GaveMessage
  | { type: 'mockapi:final'; clients: ClientReport[] };

/** Primary → worker: a numbered entry (every worker's, its own included); a call to apply; a call of its own done (with the other workers' clients for a `clients` call); another worker's Retry-After. */
export type ToWorker =
  | { type: 'mockapi:entry'; entry: JournalEntry }
  | { type: 'mockapi:apply'; call: number; op: HubOp }
  | { type: 'mockapi:done'; call: number; clients?: ClientReport[][] }
  | GaveMessage;

const TYPES = new Set(['mockapi:entry', 'mockapi:call', 'mockapi:applied', 'mockapi:apply', 'mockapi:done', 'mockapi:gave', 'mockapi:final']);

/** Whether `message` is one of the hub's (the channel also carries node:cluster's own and the ready/stop messages). */
export function isHubMessage(message: unknown): message is ToPrimary | ToWorker {
  return typeof message === 'object' && message !== null && TYPES.has((message as { type?: unknown }).type as string);
}

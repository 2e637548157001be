import type { HubOp } from '../control/other-workers.js';
import type { ClientReport } from '../control/early-retries.js';
import type { JournalEntry } from '../control/journal-entry.js';

/**
 * What `serve --workers` workers and their primary say to each other over the node:cluster IPC
 * channel. Nothing is said on a mock request's path: each worker keeps its own journal, and the
 * admin API asks the others when it is called. Entries travel as their redacted view: the API key
 * never crosses the channel. The admin calls themselves ({@link HubOp}) are control/other-workers.ts's.
 */

/** One worker's answer to a `query`: what the caller needs to merge every worker's journal as one. */
export interface JournalPart {
  /** Ids of every entry the worker keeps above `since` (and below the cutoff): the server's journal is the newest `server.journal` of all workers' entries. */
  kept: number[];
  /** Ids of the matching entries. */
  matched: number[];
  /** The last `limit` matching entries, when asked for. */
  entries: JournalEntry[] | undefined;
}

/** One worker's answer to `endpoints`: its requests per endpoint, and per answer of each endpoint. */
export interface EndpointsPart {
  endpoints: [string, number][];
  answers: [string, [string, number][]][];
}

/** One worker's answer to a `watch`: its matching entries then, and the last id it had given. */
export interface HeldPart {
  entries: JournalEntry[];
  last: number;
}

/**
 * A Retry-After a worker gave a client (early retries), `now` on that worker's clock: the other workers
 * hear of it, so an early retry is noticed on whichever worker the client comes back to. Sent only
 * when the moment it names moved by more than a second since the last one told (see hub.ts).
 */
export interface GaveMessage {
  type: 'mockapi:gave';
  client: string;
  value: string;
  now: number;
}

/**
 * Worker → primary: an admin call to run on every other worker; a call applied (with its result);
 * its own entries, one batch per event-loop turn, while some other worker watches; a watch of its own ended; a Retry-After
 * given; the worker's clients as it stops, for the one stop summary.
 */
export type ToPrimary =
  | { type: 'mockapi:call'; call: number; op: HubOp }
  | { type: 'mockapi:applied'; call: number; result?: unknown }
  | { type: 'mockapi:entries'; entries: JournalEntry[] }
  | { type: 'mockapi:unwatch' }
  | GaveMessage
  | { type: 'mockapi:final'; clients: ClientReport[] };

/**
 * Primary → worker: a call to apply; a call of its own done (each other worker's result); whether to
 * forward its entries (some other worker watches); another worker's entries (for its watches);
 * another worker's Retry-After.
 */
export type ToWorker =
  | { type: 'mockapi:apply'; call: number; op: HubOp }
  | { type: 'mockapi:done'; call: number; results: unknown[] }
  | { type: 'mockapi:forward'; on: boolean }
  | { type: 'mockapi:entries'; entries: JournalEntry[] }
  | GaveMessage;

const TYPES = new Set([
  'mockapi:call',
  'mockapi:applied',
  'mockapi:entries',
  'mockapi:unwatch',
  'mockapi:gave',
  'mockapi:final',
  'mockapi:apply',
  'mockapi:done',
  'mockapi:forward',
]);

/** Whether `message` is one of the hub's (the channel also carries node:cluster's own and the ready/stop messages). */
export function isHubMessage(message: unknown): message is ToPrimary | ToWorker {
  return typeof message === 'object' && message !== null && TYPES.has((message as { type?: unknown }).type as string);
}

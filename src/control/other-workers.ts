import type { ControlPlane, EndpointCounts, ResetParts } from './control-plane.js';
import type { ClientReport } from './early-retries.js';
import type { JournalEntry } from './journal-entry.js';
import type { Journal, RequestFilter } from './journal.js';
import type { WaitOptions } from './wait.js';

// What the control plane asks of the other workers of `serve --workers` (src/workers/ answers it):
// the admin API answers for the whole server rather than for this process.

/**
 * The admin calls a worker runs on every other worker (through the primary), each answered with a
 * value the caller merges:
 * - `query`: the worker's part of a journal query (`JournalPart`, workers/hub-messages.ts), entries with ids below `cutoff`;
 * - `watch`: the worker forwards its entries to the caller from now on (until the caller's
 *   `mockapi:unwatch`), and answers its entries matching `filter` and the last id it gave (`HeldPart`);
 * - `endpoints`: its requests per endpoint and per answer (`EndpointsPart`, workers/hub-messages.ts); `clients`: its clients given a Retry-After;
 * - `clear`, `reset`, `scenario`: applied there too (they answer nothing);
 * - `states`: the scenario states an answer's `setState` moved, applied there before that answer is sent.
 */
export type HubOp =
  | { op: 'query'; filter: RequestFilter; cutoff: number; entries: boolean }
  | { op: 'watch'; filter: RequestFilter | undefined }
  | { op: 'endpoints' }
  | { op: 'clients' }
  | { op: 'clear' }
  | { op: 'reset'; parts: ResetParts }
  | { op: 'scenario'; name: string; state: string }
  | { op: 'states'; moves: ReadonlyArray<readonly [string, string]> };

/** What the admin API needs to answer for the whole server rather than for this process. */
export interface OtherWorkers {
  /** Every worker's matching entries, as one journal (see workers/journal-parts.ts). */
  requests(filter: RequestFilter): Promise<JournalEntry[]>;
  count(filter: RequestFilter): Promise<number>;
  /** Every worker's requests per endpoint (and per answer, where known), added up. */
  endpointCounts(): Promise<EndpointCounts>;
  /** `waitForRequests` over every worker's requests. */
  waitFor(filter: RequestFilter, options: WaitOptions, signal?: AbortSignal): Promise<JournalEntry[]>;
  /**
   * Every other worker forwards its entries to this journal's listeners until the returned function
   * is called; resolves once all of them do.
   */
  watch(): Promise<() => void>;
  /** Runs `op` on every other worker; resolves once all of them did. */
  others(op: HubOp): Promise<void>;
  /** Every other worker's clients given a Retry-After, one list per worker. */
  clients(): Promise<ClientReport[][]>;
}

/** What the control plane of a `serve --workers` worker is given: the other workers, and the worker's journal ids. */
export interface WorkersLink extends OtherWorkers {
  /** The journal's ids (workers/ids.ts). */
  readonly ids: { next(): number };
  /** Starts answering the other workers' calls over `journal` and `plane`. */
  attach(journal: Journal, plane: ControlPlane): void;
}

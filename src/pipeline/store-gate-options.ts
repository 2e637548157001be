/**
 * What a store gate (src/pipeline/store-gate.ts) is made from and what it hands back, and the
 * limit store's options built from them.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { LimitStore, LimitStoreOptions } from '../state/redis-store.js';
import type { StoreLimitGate } from './limits.js';

export interface StoreGateOptions {
  url: string;
  project: string;
  /** See {@link LimitStoreOptions.keyName}. */
  keyName?: string;
  /** See {@link LimitStoreOptions.session}. */
  session?: string;
  logger: Logger;
  /** `limits.storeDown` until the first request says (for the message when Redis is away at start). */
  storeDown?: 'closed' | 'open';
  /**
   * Whether the config has any limit to decide (a rate window, a quota, a meter, an endpoint's own
   * window), for the same message: false says requests are admitted while the store is away, as
   * they are with nothing to decide. Default: true (a request with a limit then makes it true).
   */
  limited?: boolean;
  /**
   * Where requests admitted while the store was away (`storeDown: open`) are kept when the server
   * stops before it is back, and taken from at start (see state/store-pending.ts). Without it they
   * are reported on stop, by number, as not counted.
   */
  pendingFile?: string;
  /** For the time in the name of a pending file set aside. Default: the system clock. */
  clock?: Clock;
  /** For tests: the Redis timeouts of {@link LimitStoreOptions}. */
  commandTimeoutMs?: number;
  connectWaitMs?: number;
}

export interface StoreGateHandle {
  gate: StoreLimitGate;
  store: LimitStore;
  /**
   * Adds what was counted locally to the store when it can, then disconnects; what could not be
   * added is kept in the pending file (or, without one, reported as not counted).
   */
  close(): Promise<void>;
}

/** The limit store's options: the gate's, with what it is told when the store goes away and comes back. */
export function limitStoreOptions(
  options: StoreGateOptions,
  onDown: (reason: string) => void,
  onUp: () => void,
): LimitStoreOptions {
  return {
    url: options.url,
    project: options.project,
    ...(options.keyName === undefined ? {} : { keyName: options.keyName }),
    ...(options.session === undefined ? {} : { session: options.session }),
    commandTimeoutMs: options.commandTimeoutMs,
    connectWaitMs: options.connectWaitMs,
    onDown,
    onUp,
  };
}

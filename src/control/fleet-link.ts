import type { WorkersLink } from './other-workers.js';

/**
 * What the control plane of a host of a fleet is given (src/fleet/ makes it): as a `serve --workers`
 * worker's link, the journal's reads, waits and writes over every host (the fleet's journal in
 * Redis), and the moves the other hosts must follow.
 */
export interface FleetLink extends WorkersLink {
  /**
   * True while the event stream's `request` events come from the fleet's journal (every host's
   * entries, this one's too, with the fleet's ids and order) rather than from this process's records.
   */
  hearsAll(): boolean;
  /** The virtual clock was moved here (set, advance, reset): resolves once the other hosts follow. */
  clockMoved(now: number): Promise<void>;
  /** A key was rotated here (`name`: a key of `keys:`): resolves with what to tell once the other hosts serve it. */
  keyRotated(key: string, name: string | undefined): Promise<string[]>;
}

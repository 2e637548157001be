import type { JournalEntry } from './journal-entry.js';

/**
 * A control call that cannot be done as asked: the same error from the in-process API and from
 * `connectMockServer` (which rebuilds it from the admin API's answer), so a test sees one shape.
 * `status` and `code` are what the admin API answers (`{"error": code, "message": …}`).
 */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ControlError';
  }
}

/** `waitForRequests` ran out of time; `requests` holds the matching ones that did arrive. */
export class WaitTimeoutError extends ControlError {
  constructor(
    message: string,
    readonly requests: JournalEntry[],
  ) {
    super(408, 'timeout', message);
    this.name = 'WaitTimeoutError';
  }
}

/** 409 for a clock call on a server that runs on the real clock. */
export function noVirtualClock(): ControlError {
  return new ControlError(
    409,
    'no_virtual_clock',
    'this server runs on the real clock; start it with --clock <ISO time> (or the `clock` option) to move its time',
  );
}

/**
 * A call to a server that does not answer (stopped, or never started there): says which URL was
 * tried and that nothing answers at it. `connectMockServer` and the object of a closed
 * `startMockServer` give the same.
 */
export function unreachable(url: string): ControlError {
  const origin = url.replace(/\/+$/, '').replace(/\/mock$/, '');
  return new ControlError(0, 'unreachable', `nothing answers at ${origin} — is \`mockapi serve\` running?`);
}

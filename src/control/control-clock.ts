/**
 * The control plane's clock calls (`serve --clock`): read, set and advance the virtual clock, and
 * the step every move (a reset's too) takes, which empties the windows a step back would leave full.
 */
import { describeValue } from '../config/issues.js';
import { ControlError, noVirtualClock } from './control-error.js';
import type { ClockControl, ControlEvent, ControlPlaneDeps } from './control-types.js';
import { emitUsage } from './control-usage.js';
import { resetKeysHere } from './key-usage.js';
import { CLOCK_RANGE_TEXT, parseIsoTime, type VirtualClock } from './virtual-clock.js';
import { parseSpan } from './wait.js';

/** Moves the virtual clock (set, advance, or back to its start on reset); false, the clock unchanged, when it will not go there. */
export function stepClock(
  deps: ControlPlaneDeps,
  move: (clock: VirtualClock) => boolean | void,
  c: VirtualClock,
): boolean {
  const { limits } = deps;
  const before = c.now();
  if (move(c) === false) return false;
  // The limiter treats a clock that steps back as standing still: a window filled "in the future" would stay full.
  // A store's windows (endpoint windows too) follow Redis's clock, which the virtual clock does not
  // move: only this server's fallback windows (storeDown: open) read it, and are emptied.
  if (c.now() < before) {
    if (limits.shared) limits.forget({ usage: false, rateLimit: true }, c.now());
    else {
      limits.resetRateLimit();
      limits.meters.clear(true, false);
    }
    resetKeysHere(deps.keyLimits, { usage: false, rateLimit: true }, c.now());
  }
  return true;
}

/** The clock calls over `deps.virtualClock`; each move sends a `usage` event through `emit`. */
export function clockControl(deps: ControlPlaneDeps, emit: (event: ControlEvent) => void): ClockControl {
  const { virtualClock } = deps;
  return {
    now: () =>
      virtualClock === undefined
        ? Promise.reject(noVirtualClock())
        : Promise.resolve({ now: new Date(virtualClock.now()).toISOString() }),
    set(time) {
      if (virtualClock === undefined) return Promise.reject(noVirtualClock()); // before the value: 409 whatever it is
      const at =
        time instanceof Date
          ? time.getTime()
          : typeof time === 'number'
            ? time
            : typeof time === 'string'
              ? parseIsoTime(time)
              : undefined;
      if (at === undefined || !Number.isFinite(at))
        return Promise.reject(
          new ControlError(
            400,
            'bad_request',
            `set must be an ISO time such as 2026-11-30T23:59:59Z, got ${time instanceof Date ? 'an invalid Date' : describeValue(time)}`,
          ),
        );
      return moveClock(
        deps,
        emit,
        (c) => c.set(at),
        `set must be a time ${CLOCK_RANGE_TEXT}, got ${describeValue(time)}`,
      );
    },
    advance(by) {
      if (virtualClock === undefined) return Promise.reject(noVirtualClock());
      const ms = parseSpan(by);
      if (ms === undefined)
        return Promise.reject(
          new ControlError(
            400,
            'bad_request',
            `advance must be a duration such as 250ms, 2s, 1m, 1h or 31d, got ${describeValue(by)}`,
          ),
        );
      return moveClock(
        deps,
        emit,
        (c) => c.advance(ms),
        `advance ${describeValue(by)} would move the clock past 9999-12-31T23:59:59.999Z, the latest time it can show`,
      );
    },
  };
}

/** Moves the virtual clock; `refused` is the 400's message when the clock will not go there (it stays put). */
function moveClock(
  deps: ControlPlaneDeps,
  emit: (event: ControlEvent) => void,
  move: (clock: VirtualClock) => boolean,
  refused: string,
): Promise<{ now: string }> {
  const { virtualClock } = deps;
  if (virtualClock === undefined) return Promise.reject(noVirtualClock());
  if (!stepClock(deps, move, virtualClock)) return Promise.reject(new ControlError(400, 'bad_request', refused));
  emitUsage(deps, emit);
  const now = { now: new Date(virtualClock.now()).toISOString() };
  // On a host of a fleet: answered once every host shows the moved clock.
  return deps.fleet === undefined ? Promise.resolve(now) : deps.fleet.clockMoved(virtualClock.now()).then(() => now);
}

import { RESET_PARTS } from './call-input.js';
import { describeValue } from '../config/issues.js';
import { isUsableKey } from '../config/keys.js';
import { DEFAULT_KEY_NAME, type Config } from '../config/types.js';
import { createKeyMatcher } from '../pipeline/auth.js';
import type { StoreLimitGate } from '../pipeline/limits.js';
import type { RateLimitStatus } from '../pipeline/rate-limit.js';
import { monthOf } from '../state/state-file.js';
import { ControlError, noVirtualClock } from './control-error.js';
import type { ControlEvent, ControlPlane, ControlPlaneDeps, ResetParts, UsageReport } from './control-types.js';
import { viewEntry, type RawEntry } from './journal-entry.js';
import { parseSpan, waitForEntries } from './wait.js';
import { CLOCK_RANGE_TEXT, parseIsoTime, type VirtualClock } from './virtual-clock.js';
import { projectInfo } from './project-info.js';
import { endpointInfos, scenarioStates } from './config-outline.js';
import { gateMeters, keyUsage, keysUsage, meterUsage, resetKeysHere, resetKeysInStore } from './key-usage.js';

export type {
  ClockControl,
  ControlEvent,
  ControlPlane,
  ControlPlaneDeps,
  EndpointCounts,
  EndpointInfo,
  ResetParts,
  ResetResult,
  UsageReport,
} from './control-types.js';

const USAGE_EVENT_MS = 100;
const COUNTED_STEPS = new Set(['match', 'failure', 'fault', 'response', 'upstream']);

/** Whether a reload changed `apiKey` or any key of `keys:` (its text, or which name it goes by). */
function keysChanged(prev: Config, next: Config): boolean {
  if (prev.apiKey !== next.apiKey) return true;
  const a = prev.keys ?? [];
  const b = next.keys ?? [];
  return a.length !== b.length || a.some((k, i) => k.key !== b[i]?.key || k.name !== b[i]?.name);
}

/** Builds the control plane over a server's parts; it follows reloads (journal size, previous key). */
export function createControlPlane(deps: ControlPlaneDeps): ControlPlane {
  const { journal, runtime, limits, clock, virtualClock, answers, logger } = deps;
  const holder = runtime.holder;
  const listeners = new Set<(event: ControlEvent) => void>();
  const emit = (event: ControlEvent) => listeners.forEach((listener) => listener(event));

  runtime.onSwap((prev, next) => {
    journal.resize(next.server.journal);
    // Only the matcher is kept: `credential.key: "previous"` without ever holding the old key's text.
    if (keysChanged(prev, next)) journal.previousKey = createKeyMatcher(prev.apiKey, prev.keys);
    emit({ type: 'reload', data: { revision: next.revision, endpoints: next.endpoints.length } });
  });

  function report(month: string, requests: number, rate: RateLimitStatus | undefined): UsageReport {
    // The default key's figures, without the `plan` field a key of `keys:` adds.
    const { plan: _plan, ...figures } = keyUsage(
      month,
      requests,
      holder.current.config.limits.monthlyQuota,
      rate,
      null,
    );
    return figures;
  }

  function usage(): UsageReport | Promise<UsageReport> {
    const now = clock();
    const config = holder.current.config;
    const base = defaultUsage(now);
    if (config.keys === undefined || deps.keyLimits === undefined) return base;
    const keyLimits = deps.keyLimits;
    return Promise.resolve(base).then(async (own) => ({ ...own, keys: await keysUsage(config, keyLimits, now, own) }));
  }

  /** The figures of `apiKey` (the key named `default`): the usage body as a config without `keys:` has it. */
  function defaultUsage(now: number): UsageReport | Promise<UsageReport> {
    const { limits: configured } = holder.current.config;
    if (!limits.shared) {
      const own = report(monthOf(now), deps.usage.count(now), limits.rateStatus(configured, now));
      return configured.meters === undefined
        ? own
        : { ...own, meters: meterUsage(limits.meters.status(configured.meters, now), own.month) };
    }
    // Every server's month and the shared window, not this process's (which counts nothing with a store).
    // When Redis answered, the figures are the store's; when not, this server's last known ones
    // (see `SharedUsage`), and storeReachable() says so.
    return limits.usage(configured, now).then(async (shared) => {
      const own = report(shared.month, shared.requests, shared.rate);
      const meters = await gateMeters(limits, configured, now, shared.month);
      return meters === undefined ? own : { ...own, meters };
    });
  }

  /** A `usage` event with what `usage()` answers (never rejects: the store's read falls back). */
  function emitUsage(): void {
    const next = usage();
    if (next instanceof Promise) void next.then((data) => emit({ type: 'usage', data }));
    else emit({ type: 'usage', data: next });
  }

  /** Moves the virtual clock (set, advance, or back to its start on reset); false, the clock unchanged, when it will not go there. */
  function step(move: (clock: VirtualClock) => boolean | void, c: VirtualClock): boolean {
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

  /** Moves the virtual clock; `refused` is the 400's message when the clock will not go there (it stays put). */
  function moveClock(move: (clock: VirtualClock) => boolean, refused: string): Promise<{ now: string }> {
    if (virtualClock === undefined) return Promise.reject(noVirtualClock());
    if (!step(move, virtualClock)) return Promise.reject(new ControlError(400, 'bad_request', refused));
    emitUsage();
    const now = { now: new Date(virtualClock.now()).toISOString() };
    // On a host of a fleet: answered once every host shows the moved clock.
    return deps.fleet === undefined ? Promise.resolve(now) : deps.fleet.clockMoved(virtualClock.now()).then(() => now);
  }

  /** Resets this process's parts (with a store, its own part of the limits: the store's is reset apart). */
  function resetHere(parts: ResetParts, followed?: Promise<void>[]): (keyof ResetParts)[] {
    // `resources` is a part only of a server with collections (the reset above did it).
    const chosen = RESET_PARTS.filter(
      (part) => parts[part] !== false && (part !== 'resources' || deps.resources?.active() === true),
    );
    if (chosen.includes('clock') && virtualClock !== undefined) step((c) => c.reset(), virtualClock); // first: the parts below read it
    const now = clock();
    if (limits.shared) limits.forget({ usage: chosen.includes('usage'), rateLimit: chosen.includes('rateLimit') }, now);
    resetKeysHere(
      deps.keyLimits,
      { usage: chosen.includes('usage'), rateLimit: chosen.includes('rateLimit') },
      now,
      followed,
    );
    // The Retry-Afters given came from the limits reset here: a client back now is not early.
    if (chosen.includes('usage') || chosen.includes('rateLimit')) deps.clients.clear();
    // A spent budget reset: a client that asks again is not retrying in vain.
    if (chosen.includes('usage')) deps.futile?.forget();
    for (const part of chosen) {
      if (part === 'journal') journal.clear();
      else if (part === 'usage' && !limits.shared) {
        if (followed === undefined) deps.usage.reset(now);
        else followed.push(deps.usage.followReset(now)); // the worker that took the call wrote the reset
        limits.meters.clear(false, true);
      } else if (part === 'rateLimit' && !limits.shared) {
        limits.resetRateLimit();
        limits.meters.clear(true, false);
      } else if (part === 'sequences') answers.resetSequences();
      else if (part === 'scenarios') answers.resetScenarios();
      else if (part === 'stubs') deps.stubs?.clear();
      else if (part === 'resources') deps.resources?.forget();
    }
    return chosen;
  }

  /**
   * A reset's parts that Redis holds (the month, the rate window), zeroed for every server; what was
   * zeroed, in words, or a 503 `store_unavailable` when Redis could not apply them.
   */
  async function resetLimitsInStore(gate: StoreLimitGate, parts: ResetParts): Promise<string | undefined> {
    const store = { usage: parts.usage !== false, rateLimit: parts.rateLimit !== false };
    if (!store.usage && !store.rateLimit) return undefined;
    const what =
      store.usage && store.rateLimit ? 'the month and the rate window' : store.usage ? 'the month' : 'the rate window';
    await Promise.all([gate.reset(store), resetKeysInStore(holder.current.config, deps.keyLimits, store)]).catch(
      (err: Error) => {
        throw new ControlError(
          503,
          'store_unavailable',
          `${err.message}: ${what} may not be reset, nothing else was; repeat the call once it is back`,
        );
      },
    );
    return what;
  }

  let usageTimer: NodeJS.Timeout | undefined;
  function onEntry(entry: RawEntry, heard: boolean): void {
    // A host of a fleet hears its own requests back from the fleet's journal, with the fleet's ids.
    if (!heard && deps.fleet?.hearsAll() === true) return;
    emit({ type: 'request', data: viewEntry(entry) });
    if (!COUNTED_STEPS.has(entry.step) || usageTimer !== undefined) return;
    // At most one usage event per 100 ms: a load test must not turn into a flood of events.
    usageTimer = setTimeout(() => {
      usageTimer = undefined;
      if (listeners.size > 0) emitUsage();
    }, USAGE_EVENT_MS);
    usageTimer.unref();
  }
  let unlistenJournal: (() => void) | undefined;

  const plane: ControlPlane = {
    requests: (filter = {}) => journal.list(filter).map(viewEntry),
    countRequests: (filter = {}) => journal.list({ ...filter, limit: undefined }).length,
    waitForRequests: (filter = {}, options = {}, signal) => waitForEntries(journal, filter, options, signal),
    clearRequests: () => journal.clear(),
    usage,
    storeReachable: () => (limits.shared ? limits.reachable : undefined),
    reset(parts = {}) {
      const resources = parts.resources !== false && deps.resources?.active() === true ? deps.resources : undefined;
      if (resources === undefined && !limits.shared) {
        const reset = resetHere(parts);
        const after = usage();
        if (after instanceof Promise) {
          return after.then((data) => {
            emit({ type: 'usage', data });
            return { reset, usage: data, scenarios: answers.scenarios() };
          });
        }
        const result = { reset, usage: after, scenarios: answers.scenarios() };
        emit({ type: 'usage', data: result.usage });
        return result;
      }
      return (async () => {
        // What Redis holds first: when it cannot be reached the call fails having changed nothing
        // here (not even the clock), and repeating it (each part is idempotent) does the whole reset.
        const zeroed = limits.shared ? await resetLimitsInStore(limits, parts) : undefined;
        if (resources !== undefined) {
          // The collections' seed reads the clock: it goes back to its start between emptying and seeding.
          const resetClock = (): void => {
            if (parts.clock !== false && virtualClock !== undefined) step((c) => c.reset(), virtualClock);
          };
          await resources.reset(resetClock).catch((err: unknown) => {
            if (zeroed === undefined || !(err instanceof ControlError)) throw err;
            throw new ControlError(err.status, err.code, `${err.message} (${zeroed} already zeroed in the store)`);
          });
        }
        const reset = resetHere(resources === undefined ? parts : { ...parts, resources: false });
        const result = {
          reset: resources === undefined ? reset : [...reset, 'resources' as const],
          usage: await usage(),
          scenarios: answers.scenarios(),
        };
        emit({ type: 'usage', data: result.usage });
        return result;
      })();
    },
    resetHere(parts = {}) {
      const chosen = resetHere(parts);
      emitUsage();
      return chosen;
    },
    async followReset(parts = {}) {
      const followed: Promise<void>[] = [];
      const chosen = resetHere(parts, followed);
      await Promise.all(followed);
      emitUsage();
      return chosen;
    },
    async writeReset() {
      const stores = [deps.usage, ...[...(deps.keyLimits?.all().values() ?? [])].map((p) => p.usage)];
      await Promise.all(stores.map((store) => store.flush()));
    },
    async rotateKey(key, name) {
      const file = holder.current.config.file;
      if (file === undefined)
        throw new ControlError(
          409,
          'conflict',
          'the config was given as an object, not a file: there is no file to rotate the key in',
        );
      if (key !== undefined && (typeof key !== 'string' || !isUsableKey(key))) {
        throw new ControlError(
          400,
          'bad_request',
          'key must be printable ASCII without spaces or ":", as apiKey requires',
        );
      }
      const messages: string[] = [];
      // Loaded on first use: it brings the YAML editor, which a server that never rotates does not need.
      const { rotateKeyFile } = await import('./rotate-key.js');
      const rotated = await rotateKeyFile(
        { config: file, key, ...(name === undefined ? {} : { name }) },
        { err: (line) => messages.push(line) },
      );
      if (rotated === undefined) throw new ControlError(409, 'conflict', messages.join('\n'));
      for (const line of messages) logger.info(line);
      // A server started without watching serves the new key only when told; one that watches may not have seen it yet.
      await runtime.reload();
      const served = holder.current.config;
      const now =
        name === undefined || name === DEFAULT_KEY_NAME
          ? served.apiKey
          : served.keys?.find((k) => k.name === name)?.key;
      if (now !== rotated.key)
        throw new ControlError(409, 'conflict', 'the config file changed again before the new key could be served');
      // On a host of a fleet: every host registered in its store rotates its own file, and confirms.
      for (const line of (await deps.fleet?.keyRotated(rotated.key, name)) ?? []) logger.info(line);
      return { key: rotated.key };
    },
    scenarios: () => answers.scenarios(),
    setScenario(name, state) {
      if (typeof state !== 'string') throw new ControlError(400, 'bad_request', 'state must be a string');
      if (!answers.setScenario(name, state))
        throw new ControlError(404, 'not_found', `no scenario named "${name}" in the config`);
      return answers.scenarios();
    },
    clock: {
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
        return moveClock((c) => c.set(at), `set must be a time ${CLOCK_RANGE_TEXT}, got ${describeValue(time)}`);
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
          (c) => c.advance(ms),
          `advance ${describeValue(by)} would move the clock past 9999-12-31T23:59:59.999Z, the latest time it can show`,
        );
      },
    },
    clients: () => deps.clients.list(),
    project: (reveal) => ({
      ...projectInfo(holder.current.config, reveal),
      scenarioStates: scenarioStates(holder.current.config, answers.scenarios()),
    }),
    endpoints: (counts) => endpointInfos(holder.current, journal, counts),
    publish: emit,
    subscribe(listener) {
      listeners.add(listener);
      unlistenJournal ??= journal.listen(onEntry);
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0 || unlistenJournal === undefined) return;
        unlistenJournal();
        unlistenJournal = undefined;
      };
    },
  };
  return plane;
}

/**
 * The control plane: the functions behind the admin API, startMockServer's object and
 * connectMockServer, over a server's parts; it follows reloads and sends the events. Its calls
 * live beside it: control-usage.ts, control-reset.ts, control-clock.ts and control-rotate.ts.
 */
import { createKeyMatcher } from '../pipeline/auth.js';
import type { Config } from '../config/types.js';
import { ControlError } from './control-error.js';
import type { ControlEvent, ControlPlane, ControlPlaneDeps } from './control-types.js';
import { viewEntry, type RawEntry } from './journal-entry.js';
import { waitForEntries } from './wait.js';
import { projectInfo } from './project-info.js';
import { endpointInfos, scenarioStates } from './config-outline.js';
import { clockControl } from './control-clock.js';
import { resetHere, resetServer } from './control-reset.js';
import { rotateServedKey } from './control-rotate.js';
import { emitUsage, usageReport } from './control-usage.js';

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
  const { journal, runtime, limits, answers } = deps;
  const holder = runtime.holder;
  const listeners = new Set<(event: ControlEvent) => void>();
  const emit = (event: ControlEvent) => listeners.forEach((listener) => listener(event));

  runtime.onSwap((prev, next) => {
    journal.resize(next.server.journal);
    // Only the matcher is kept: `credential.key: "previous"` without ever holding the old key's text.
    if (keysChanged(prev, next)) journal.previousKey = createKeyMatcher(prev.apiKey, prev.keys);
    emit({ type: 'reload', data: { revision: next.revision, endpoints: next.endpoints.length } });
  });

  let usageTimer: NodeJS.Timeout | undefined;
  function onEntry(entry: RawEntry, heard: boolean): void {
    // A host of a fleet hears its own requests back from the fleet's journal, with the fleet's ids.
    if (!heard && deps.fleet?.hearsAll() === true) return;
    emit({ type: 'request', data: viewEntry(entry) });
    if (!COUNTED_STEPS.has(entry.step) || usageTimer !== undefined) return;
    // At most one usage event per 100 ms: a load test must not turn into a flood of events.
    usageTimer = setTimeout(() => {
      usageTimer = undefined;
      if (listeners.size > 0) emitUsage(deps, emit);
    }, USAGE_EVENT_MS);
    usageTimer.unref();
  }
  let unlistenJournal: (() => void) | undefined;

  const plane: ControlPlane = {
    requests: (filter = {}) => journal.list(filter).map(viewEntry),
    countRequests: (filter = {}) => journal.list({ ...filter, limit: undefined }).length,
    waitForRequests: (filter = {}, options = {}, signal) => waitForEntries(journal, filter, options, signal),
    clearRequests: () => journal.clear(),
    usage: () => usageReport(deps),
    storeReachable: () => (limits.shared ? limits.reachable : undefined),
    reset: (parts = {}) => resetServer(deps, emit, parts),
    resetHere(parts = {}) {
      const chosen = resetHere(deps, parts);
      emitUsage(deps, emit);
      return chosen;
    },
    async followReset(parts = {}) {
      const followed: Promise<void>[] = [];
      const chosen = resetHere(deps, parts, followed);
      await Promise.all(followed);
      emitUsage(deps, emit);
      return chosen;
    },
    async writeReset() {
      const stores = [deps.usage, ...[...(deps.keyLimits?.all().values() ?? [])].map((p) => p.usage)];
      await Promise.all(stores.map((store) => store.flush()));
    },
    rotateKey: (key, name) => rotateServedKey(deps, key, name),
    scenarios: () => answers.scenarios(),
    setScenario(name, state) {
      if (typeof state !== 'string') throw new ControlError(400, 'bad_request', 'state must be a string');
      if (!answers.setScenario(name, state))
        throw new ControlError(404, 'not_found', `no scenario named "${name}" in the config`);
      return answers.scenarios();
    },
    clock: clockControl(deps, emit),
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

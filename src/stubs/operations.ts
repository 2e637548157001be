import type { Clock } from '../clock.js';
import { describeValue } from '../config/issues.js';
import { ControlError } from '../control/control-error.js';
import type { UsageReport } from '../control/control-plane.js';
import type { LimitGate, StoreLimitGate } from '../pipeline/limits.js';
import type { UsageStore } from '../state/usage-store.js';
import { DEFAULT_KEY_NAME, type Config } from '../config/types.js';
import type { KeyLimits } from '../pipeline/key-limits.js';
import { setKeyUsage, setMeterUsage } from '../control/key-usage.js';
import type { StubCreated, StubInfo, StubRecord, StubStore } from './store.js';

/** What a change to the stubs is, for the other workers of `serve --workers`. */
export type StubChange =
  { op: 'stub-add'; record: StubRecord } | { op: 'stub-remove'; id: string } | { op: 'stub-clear' };

/**
 * The stub and usage calls, shared by the admin routes and the programmatic API so that both give
 * the same answers. A change is applied here, then (with `serve --workers`) on every other worker
 * before the call resolves, so every worker serves it from the moment the call returns.
 */
export interface StubOperations {
  add(body: Record<string, unknown>): Promise<StubCreated>;
  list(): Promise<StubInfo[]>;
  remove(id: string): Promise<StubInfo[]>;
  clear(): Promise<void>;
  setUsage(body: Record<string, unknown>): Promise<UsageReport>;
}

export interface StubOperationDeps {
  store: StubStore;
  limits: LimitGate | StoreLimitGate;
  usage: UsageStore;
  clock: Clock;
  /** The config served now (its `keys:`), and the limits of those keys. */
  config?: () => Config;
  keyLimits?: KeyLimits;
  /** The usage report, as `GET /__mockapi/usage` gives it. */
  report(): UsageReport | Promise<UsageReport>;
  /** Applies a change on every other worker; resolves once all did. Absent outside `serve --workers`. */
  replicate?(change: StubChange): Promise<void>;
  /** With `serve --workers`: the remaining counts of stubs with `times`, which the primary owns. */
  counts?(): Promise<Map<string, number>>;
  /** On a fleet: every host's hits of each stub (one missing: this process's own count). */
  hits?(): Promise<Map<string, number>>;
}

/** At most this many stubs at once: each holds its compiled answer, and a test needs far fewer. */
export const MAX_STUBS = 100_000;

export function createStubOperations(deps: StubOperationDeps): StubOperations {
  const { store, limits, clock } = deps;
  const replicate = async (change: StubChange): Promise<void> => deps.replicate?.(change);
  async function list(): Promise<StubInfo[]> {
    const stubs = store.list();
    const counted = deps.counts !== undefined && stubs.some((s) => s.remaining !== null);
    if (!counted && (deps.hits === undefined || stubs.length === 0)) return stubs;
    const [counts, hits] = await Promise.all([counted ? deps.counts?.() : undefined, deps.hits?.()]);
    return stubs.map((s) => ({
      ...s,
      ...(s.remaining === null || counts === undefined ? {} : { remaining: counts.get(s.id) ?? 0 }),
      ...(hits === undefined ? {} : { hits: hits.get(s.id) ?? s.hits }),
    }));
  }
  return {
    async add(body) {
      if (store.size >= MAX_STUBS)
        throw new ControlError(
          409,
          'too_many_stubs',
          `there are ${MAX_STUBS} stubs already; remove some (DELETE /__mockapi/stubs removes all) before adding more`,
        );
      const created = await store.add(body);
      const record = store.record(created.id);
      if (record !== undefined) await replicate({ op: 'stub-add', record });
      return created;
    },
    list,
    async remove(id) {
      if (!store.remove(id))
        throw new ControlError(
          404,
          'not_found',
          `no stub with id ${JSON.stringify(id)} (it may have used up its times, or been removed)`,
        );
      await replicate({ op: 'stub-remove', id });
      return list();
    },
    async clear() {
      store.clear();
      await replicate({ op: 'stub-clear' });
    },
    async setUsage(body) {
      for (const field of Object.keys(body)) {
        if (!['requests', 'key', 'meter', 'value'].includes(field))
          throw new ControlError(
            400,
            'bad_request',
            `unknown field "${field}"; usage takes requests, meter and value, and key`,
          );
      }
      const { requests, key, meter, value } = body;
      if (key !== undefined && typeof key !== 'string')
        throw new ControlError(400, 'bad_request', `key must be the name of a key, got ${describeValue(key)}`);
      if (meter !== undefined || value !== undefined) {
        if (typeof meter !== 'string')
          throw new ControlError(
            400,
            'bad_request',
            `meter must be the name of a meter, got ${meter === undefined ? 'nothing' : describeValue(meter)}`,
          );
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 9e9)
          throw new ControlError(
            400,
            'bad_request',
            `value must be a number from 0 to 9000000000, got ${value === undefined ? 'nothing' : describeValue(value)}`,
          );
        const config = deps.config?.() ?? ({ keys: undefined, limits: {} } as unknown as Config);
        await setMeterUsage(config, limits, deps.keyLimits, key, meter, value, clock());
        if (requests === undefined) return deps.report();
      }
      if (typeof requests !== 'number' || !Number.isSafeInteger(requests) || requests < 0) {
        throw new ControlError(
          400,
          'bad_request',
          `requests must be a whole number ≥ 0, got ${requests === undefined ? 'nothing' : describeValue(requests)}`,
        );
      }
      const now = clock();
      if (key !== undefined && key !== DEFAULT_KEY_NAME) {
        const config = deps.config?.() ?? ({ keys: undefined } as unknown as Config);
        await setKeyUsage(config, deps.keyLimits, key, requests, now);
      } else if (limits.shared)
        await limits
          .setUsage(requests, now)
          .catch((err: Error) => Promise.reject(new ControlError(503, 'store_unavailable', err.message)));
      else deps.usage.set(now, requests);
      return deps.report();
    },
  };
}

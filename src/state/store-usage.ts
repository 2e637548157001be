/**
 * The key's window and month in the limit store: the keys of an admission call ({@link admitSender}),
 * each endpoint's window keys by route ({@link endpointWindows}), and the commands that read, reset or
 * add to them ({@link usageCommands}).
 */
import type { RateLimitConfig } from '../config/types.js';
import type { EndpointWindowKeys, SendAdmit } from './admit-batch.js';
import { endpointId, endpointKeys } from './limit-script.js';
import type { EndpointWindow, LimitStore, LimitStoreOptions, StatusReply } from './limit-store.js';
import type { StoreCommands } from './store-commands.js';
import { SCRIPTS } from './store-scripts.js';

/** The keys of one limit store. */
export interface StoreKeyNames {
  windowKey: string;
  metaKey: string;
  usageKey: string;
  endpointsKey: string;
}

/** The admission calls of a key's batches: the metered script when they carry meters, else the plain one. */
export function admitSender(
  run: StoreCommands['run'],
  { windowKey, metaKey, usageKey, endpointsKey }: StoreKeyNames,
  admitKeys: readonly string[],
): SendAdmit {
  return (args, late, more, meterKeyList) => {
    if (meterKeyList !== undefined)
      return run(
        SCRIPTS.meteredAdmit,
        [
          String(4 + more.length + meterKeyList.length),
          windowKey,
          metaKey,
          usageKey,
          endpointsKey,
          ...more,
          ...meterKeyList,
          ...args,
        ],
        late,
      );
    return run(
      SCRIPTS.admit,
      more.length === 0
        ? [...admitKeys, ...args]
        : [String(4 + more.length), windowKey, metaKey, usageKey, endpointsKey, ...more, ...args],
      late,
    );
  };
}

/** Each endpoint's window keys, by its route. */
export function endpointWindows(options: LimitStoreOptions): (endpoint: EndpointWindow) => EndpointWindowKeys {
  // route → its keys, with the window of the config that last asked (a reload makes a new object)
  const windows = new Map<string, { rateLimit: RateLimitConfig; keys: EndpointWindowKeys }>();
  function endpointWindow({ route, rateLimit }: EndpointWindow): EndpointWindowKeys {
    const known = windows.get(route);
    if (known?.rateLimit === rateLimit) return known.keys;
    const id = known?.keys.id ?? endpointId(route);
    const [window, meta] = endpointKeys(options.project, options.keyName, id, options.session);
    const keys = { id, window, meta, requests: rateLimit.requests, windowMs: rateLimit.windowMs };
    windows.set(route, { rateLimit, keys });
    return keys;
  }
  return endpointWindow;
}

/** The commands of the key's month and windows: read, reset, add. */
export function usageCommands(
  { run, send }: StoreCommands,
  { windowKey, metaKey, usageKey, endpointsKey }: StoreKeyNames,
  admitKeys: readonly string[],
  options: LimitStoreOptions,
): Pick<LimitStore, 'usage' | 'status' | 'resetUsage' | 'resetWindow' | 'addUsage'> {
  return {
    async usage() {
      const [month, requests] = (await run(SCRIPTS.usage, ['1', usageKey])) as [string, number];
      return { month, requests };
    },
    async status(limits) {
      const rate = limits.rateLimit;
      return (await run(SCRIPTS.status, [
        ...admitKeys,
        String(rate?.requests ?? 0),
        String(rate?.windowMs ?? 0),
      ])) as StatusReply;
    },
    async resetUsage() {
      const [month, requests] = (await run(SCRIPTS.reset, ['1', usageKey])) as [string, number];
      return { month, requests };
    },
    async resetWindow() {
      const ids = (await send(['SMEMBERS', endpointsKey])) as string[];
      const keys = ids.flatMap((id) => endpointKeys(options.project, options.keyName, id, options.session));
      await run(SCRIPTS.resetWindows, [String(3 + keys.length), windowKey, metaKey, endpointsKey, ...keys, ...ids]);
    },
    async addUsage(month, n) {
      await run(SCRIPTS.add, ['1', usageKey, month, String(n)]);
    },
  };
}

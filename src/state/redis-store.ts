/**
 * The shared limits of a project (or one key) in Redis: a {@link LimitStore} over a client (its
 * own, or the one a fleet's sessions lease), the admissions, counts and settles of a turn each in
 * one script call. Its parts: limit-store.ts (the interface), store-scripts.ts (the scripts and the
 * client that loads them), store-commands.ts (deadlines, EVALSHA), store-usage.ts (the key's
 * window and month), store-meters.ts (meters).
 */
import { checkStoreUrl, redactStoreUrl } from '../config/store-url.js';
import type { MeterConfig } from '../config/types.js';
import { createAdmitBatcher } from './admit-batch.js';
import { storeKeys } from './limit-script.js';
import type { LimitStore, LimitStoreOptions } from './limit-store.js';
import { meterSetKeys } from './meter-script.js';
import { firstConnection, leaseClient, StoreSetupError, type Client } from './redis-client.js';
import { createSettleBatcher } from './settle-batch.js';
import { storeCommands } from './store-commands.js';
import { meterBatches, meterCommands } from './store-meters.js';
import { PERIOD, SCRIPTS, makeClient } from './store-scripts.js';
import { admitSender, endpointWindows, usageCommands, type StoreKeyNames } from './store-usage.js';

export type { AdmitReply } from './admit-batch.js';
export type { EndpointWindow, LimitStore, LimitStoreOptions, StatusReply } from './limit-store.js';

const NO_METERS: readonly MeterConfig[] = [];

/**
 * Connects to the store. Resolves once connected, or after `connectWaitMs` without a connection
 * (the store then starts down and `onDown` was called; the client keeps retrying). Reconnects by
 * itself, at most a second apart, so a restarted Redis is used again within about a second.
 */
export async function openLimitStore(options: LimitStoreOptions): Promise<LimitStore> {
  const problem = checkStoreUrl(options.url);
  if (problem !== undefined) throw new StoreSetupError(`limits.store ${problem}`);
  const timeout = options.commandTimeoutMs ?? 3000;
  let client: Client;
  // A session's store leases the connection its siblings use: a thousand sessions, one connection.
  let lease: ReturnType<typeof leaseClient> | undefined;
  try {
    if (options.session !== undefined) lease = leaseClient(options.url, () => makeClient(options.url));
    client = lease?.client ?? makeClient(options.url);
  } catch (err) {
    throw new StoreSetupError(`limits.store ${redactStoreUrl(options.url)}: ${(err as Error).message}`);
  }
  const [windowKey, metaKey, usageKey, endpointsKey] = storeKeys(options.project, options.keyName, options.session);
  let closed = false;
  const down = (reason: string) => {
    if (!closed) options.onDown?.(reason);
  };
  const listeners: [string, (...args: unknown[]) => void][] = [
    ['error', (err) => down((err as Error).message || String(err))],
    ['end', () => down('connection closed')],
    ['ready', () => options.onUp?.()],
  ];
  for (const [event, listener] of listeners) client.on(event, listener);
  const connecting = lease === undefined ? client.connect() : client.isReady ? Promise.resolve() : lease.connected;
  if (!(await firstConnection(client, connecting, options.connectWaitMs ?? 2000)))
    down(`cannot connect to ${redactStoreUrl(options.url)}`);
  return storeOver(
    client,
    options,
    timeout,
    { windowKey, metaKey, usageKey, endpointsKey },
    async () => {
      closed = true;
      if (lease !== undefined) {
        for (const [event, listener] of listeners)
          (client as unknown as { off(e: string, l: (...args: unknown[]) => void): void }).off(event, listener);
        await lease.release();
      } else if (client.isReady) await client.close().catch(() => client.destroy());
      else client.destroy();
    },
    () => closed,
  );
}

/** The store's commands over a connected (or connecting) `client`; `closeClient` lets go of it. */
function storeOver(
  client: Client,
  options: LimitStoreOptions,
  timeout: number,
  names: StoreKeyNames,
  closeClient: () => Promise<void>,
  isClosed: () => boolean,
): LimitStore {
  const { windowKey, metaKey, usageKey } = names;
  const commands = storeCommands(client, timeout, usageKey);
  const { run, counts, sweep } = commands;
  const admitKeys = ['3', windowKey, metaKey, usageKey]; // built once: admit is the hot path
  const auditCap = options.auditCap ?? (Number(process.env.MOCKAPI_LIMIT_AUDIT) || 0);
  const [meterSetKey, auditKey] = meterSetKeys(options.project, options.keyName, options.session);
  const { meterBatch, metersOf } = meterBatches(options, auditCap, meterSetKey, auditKey);
  // A turn's settles ride with an admission call of the same meters when there is one (no call of their own).
  const admissions = createAdmitBatcher(admitSender(run, names, admitKeys), setImmediate, (batch) => {
    const meters = metersOf.get(batch);
    return meters === undefined ? undefined : settles.take(meters);
  });
  const settles = createSettleBatcher(
    (args, keys) => run(SCRIPTS.settle, [String(keys.length), ...keys, ...args]),
    auditCap,
    (meters) => [...meterBatch(meters).keys.slice(0, meters.length * 3), auditKey],
    PERIOD,
    (meters, part) => admissions.carry(meterBatch(meters), part),
  );
  const endpointWindow = endpointWindows(options);
  const meterCalls = meterCommands(commands, meterBatch, options, meterSetKey);
  const usageCalls = usageCommands(commands, names, admitKeys, options);

  return {
    get ready() {
      return !isClosed() && client.isReady;
    },
    admit(limits, late, endpoint, reserves) {
      const windowKeys = endpoint === undefined ? undefined : endpointWindow(endpoint);
      // With an audit, every admission goes through the metered script (with no meters, if none), which records it.
      if (limits.meters === undefined && auditCap === 0) return admissions.admit(limits, late, windowKeys);
      return admissions.admit(limits, late, windowKeys, meterBatch(limits.meters ?? NO_METERS), reserves);
    },
    count(told) {
      if (auditCap > 0) return false;
      counts.count(told);
      return true;
    },
    settle: (meters, one) => settles.settle(meters, one),
    meterStatus: meterCalls.meterStatus,
    setMeter: meterCalls.setMeter,
    resetMeters: meterCalls.resetMeters,
    usage: usageCalls.usage,
    status: usageCalls.status,
    resetUsage: usageCalls.resetUsage,
    resetWindow: usageCalls.resetWindow,
    addUsage: usageCalls.addUsage,
    async close() {
      admissions.flush(); // what this turn asked goes before the connection closes
      settles.flush();
      clearInterval(sweep);
      await closeClient();
    },
  };
}

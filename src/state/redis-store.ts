import { createHash } from 'node:crypto';
import { checkStoreUrl, redactStoreUrl } from '../config/store-url.js';
import type { LimitsConfig, MeterConfig, RateLimitConfig } from '../config/types.js';
import { createAdmitBatcher, type AdmitReply, type EndpointWindowKeys, type MeterBatch } from './admit-batch.js';
import {
  ADD_USAGE_SCRIPT,
  ADMIT_SCRIPT,
  COUNT_SCRIPT,
  endpointId,
  endpointKeys,
  RESET_USAGE_SCRIPT,
  RESET_WINDOWS_SCRIPT,
  STATUS_SCRIPT,
  storeKeys,
  USAGE_SCRIPT,
} from './limit-script.js';
import { createCountBatcher, type CountTold } from './count-batch.js';
import { firstConnection, leaseClient, newClient, StoreSetupError, type Client } from './redis-client.js';
import { createSettleBatcher, type SettleOne } from './settle-batch.js';
import {
  METER_STATUS_SCRIPT,
  METERED_ADMIT_SCRIPT,
  meterKeys,
  meterSetKeys,
  RESET_METERS_SCRIPT,
  SET_METER_SCRIPT,
  SETTLE_SCRIPT,
} from './meter-script.js';

export type { AdmitReply } from './admit-batch.js';

/** What the status script answers: the month and its count, then the window (`limit` 0 without a rate limit). */
export type StatusReply = [month: string, requests: number, limit: number, remaining: number, resetSeconds: number];

/** An endpoint's own window (`endpoints[].limits.rateLimit`), by its route (`GET /users/:id`). */
export interface EndpointWindow {
  route: string;
  rateLimit: RateLimitConfig;
}

/** The shared limits of one project (or one key of `keys:`) in Redis. */
export interface LimitStore {
  /** True while connected (a command may still fail). */
  readonly ready: boolean;
  /**
   * Decides and counts one request. The requests of one event-loop turn with the same limits go to
   * Redis as one script call (see state/admit-batch.ts). Rejects when Redis cannot be reached (or refuses the script).
   * A command that got no answer in time may still run in Redis afterwards (a Redis that hung and
   * resumes): its reply, when it comes after all, goes to `late` instead. With `endpoint`, the
   * endpoint's window is checked and counted in the same script call, before the key's window.
   */
  admit(
    limits: LimitsConfig,
    late?: (reply: AdmitReply) => void,
    endpoint?: EndpointWindow,
    reserves?: readonly number[],
  ): Promise<AdmitReply>;
  /**
   * Counts one request in this month that has nothing to decide (no rate limit, quota, meter or
   * endpoint window), with nothing to wait for: the request is admitted now. The count joins this
   * turn's count call when nothing was sent after it, else opens one, handed to the client at once
   * (so it is written before the answers of the turn, which wait for its end). `told` hears once per
   * call how many it carried: `counted`; `failed` (not counted: the caller keeps them); or `late`,
   * counted by Redis after all, after the call had failed as unanswered (a Redis that hung). False
   * when this store decides every admission (an audit records each): admit then.
   */
  count(told: CountTold): boolean;
  /** Corrects admissions of `meters` (settles of one turn go in one script call). */
  settle(meters: readonly MeterConfig[], one: SettleOne): Promise<void>;
  /** Each of `meters` as the next request would find it (`used, resetMs` each), and the month. */
  meterStatus(meters: readonly MeterConfig[]): Promise<{ used: number[]; resetMs: number[]; month: string }>;
  /** Sets one meter's window, month or total. */
  setMeter(meter: MeterConfig, units: number): Promise<void>;
  /** Empties the meters' windows and/or their months and totals, every meter this key counted in. */
  resetMeters(windows: boolean, counts: boolean): Promise<void>;
  /** This month (UTC, by Redis's clock) and what every server counted in it. */
  usage(): Promise<{ month: string; requests: number }>;
  /** {@link usage} and the shared window as the next request would find it, counting nothing. */
  status(limits: LimitsConfig): Promise<StatusReply>;
  /** Zeroes this month for every server; resolves to what was counted before. */
  resetUsage(): Promise<{ month: string; requests: number }>;
  /** Empties the shared rate window and every endpoint window of this key (the month's count stays). */
  resetWindow(): Promise<void>;
  /**
   * Adds `n` requests counted elsewhere (locally, while the store was down) to `month` (`''`: this
   * month by Redis's clock); a negative `n` takes back requests it counted that were answered without it.
   */
  addUsage(month: string, n: number): Promise<void>;
  /** Disconnects; pending commands finish first. */
  close(): Promise<void>;
}

export interface LimitStoreOptions {
  /** `redis://[user:pass@]host:port/db`, `rediss://…` or `unix:///path/to/socket?db=n`. */
  url: string;
  project: string;
  /** The name of a key of `keys:` whose limits these are; absent for `apiKey`'s (the project's own). */
  keyName?: string;
  /**
   * A named session of a fleet whose limits these are (`{mockapi:<project>}:s:<id>:…`); absent for
   * the default session's. The sessions' stores of one URL share one connection (see {@link leaseClient}).
   */
  session?: string;
  /** Called when the connection is lost or a command fails (`reason`), and when it is ready again. */
  onDown?: (reason: string) => void;
  onUp?: () => void;
  /** Longest wait for a reply before the store counts as unreachable. Default 3000 ms. */
  commandTimeoutMs?: number;
  /** Longest wait for the first connection before `openLimitStore` resolves anyway (down). Default 2000 ms. */
  connectWaitMs?: number;
  /**
   * Keep the last `auditCap` admissions and settles in the key's audit list (see
   * METERED_ADMIT_SCRIPT), for tests that prove the limits exact. Default: `MOCKAPI_LIMIT_AUDIT`, else 0 (none).
   */
  auditCap?: number;
}

const script = (source: string) => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const SCRIPTS = {
  admit: script(ADMIT_SCRIPT),
  usage: script(USAGE_SCRIPT),
  status: script(STATUS_SCRIPT),
  reset: script(RESET_USAGE_SCRIPT),
  add: script(ADD_USAGE_SCRIPT),
  count: script(COUNT_SCRIPT),
  resetWindows: script(RESET_WINDOWS_SCRIPT),
  meteredAdmit: script(METERED_ADMIT_SCRIPT),
  settle: script(SETTLE_SCRIPT),
  meterStatus: script(METER_STATUS_SCRIPT),
  setMeter: script(SET_METER_SCRIPT),
  resetMeters: script(RESET_METERS_SCRIPT),
};

const NO_METERS: readonly MeterConfig[] = [];

/** The period of a meter as the scripts write it. */
const PERIOD: Record<MeterConfig['period'], string> = { window: 'w', month: 'm', total: 't' };

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

/** A client of the store at `url`, as the limits use it. */
function makeClient(url: string): Client {
  const client = newClient(url);
  // Every script loaded first on each connection (a fresh or restarted Redis has none), before any
  // command of the stores using it: a call refused for lack of its script is sent again a round trip
  // later, after commands sent behind it (a reset would then run before counts made before it).
  client.on('ready', () => {
    for (const { source } of Object.values(SCRIPTS)) client.sendCommand(['SCRIPT', 'LOAD', source]).catch(() => {});
  });
  return client;
}

interface StoreKeyNames {
  windowKey: string;
  metaKey: string;
  usageKey: string;
  endpointsKey: string;
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
  const { windowKey, metaKey, usageKey, endpointsKey } = names;
  // A deadline for every command without a timer of its own: the node-redis `timeout` option
  // makes an AbortSignal and a timer per command, about 5 % of a request's CPU. Commands are
  // kept in the order they were sent, so one sweep looks at the oldest ones only.
  // `expired`: failed by the sweep; a reply that still comes goes to the command's `late`.
  const waiting = new Set<{ deadline: number; fail: (err: Error) => void; expired: boolean }>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const entry of waiting) {
        if (entry.deadline > now) break;
        waiting.delete(entry);
        entry.expired = true;
        entry.fail(new Error(`no answer within ${timeout} ms`));
      }
    },
    Math.min(250, timeout),
  );
  sweep.unref();
  function send(args: string[], late?: (reply: unknown) => void): Promise<unknown> {
    counts.closeBefore(args); // a count call open in this turn stays before this command
    return new Promise((done, fail) => {
      const entry = { deadline: Date.now() + timeout, fail, expired: false };
      waiting.add(entry);
      client.sendCommand(args).then(
        (reply) => {
          waiting.delete(entry);
          if (entry.expired)
            late?.(reply); // already failed as unanswered: Redis ran it after all
          else done(reply);
        },
        (err: unknown) => {
          waiting.delete(entry);
          fail(err);
        },
      );
    });
  }
  /** EVALSHA, and EVAL when Redis does not have the script yet (a restart empties its cache). */
  async function run(
    script: { sha: string; source: string },
    keysAndArgs: string[],
    late?: (reply: unknown) => void,
  ): Promise<unknown> {
    try {
      return await send(['EVALSHA', script.sha, ...keysAndArgs], late);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return send(['EVAL', script.source, ...keysAndArgs], late);
    }
  }
  const counts = createCountBatcher(send, SCRIPTS.count, usageKey);
  const admitKeys = ['3', windowKey, metaKey, usageKey]; // built once: admit is the hot path
  const auditCap = options.auditCap ?? (Number(process.env.MOCKAPI_LIMIT_AUDIT) || 0);
  const [meterSetKey, auditKey] = meterSetKeys(options.project, options.keyName, options.session);
  // A plan's meters (one list per load) → their part of the scripts' ARGV and KEYS, made once.
  const batches = new WeakMap<readonly MeterConfig[], MeterBatch>();
  const listOf = new WeakMap<MeterBatch, readonly MeterConfig[]>();
  function meterBatch(meters: readonly MeterConfig[]): MeterBatch {
    let batch = batches.get(meters);
    if (batch === undefined) {
      const args = [
        String(meters.length),
        ...meters.flatMap((m) => [m.name, String(m.limit), String(m.windowMs), PERIOD[m.period]]),
      ];
      const keys = [
        ...meters.flatMap((m) => meterKeys(options.project, options.keyName, m.name, options.session)),
        meterSetKey,
        auditKey,
      ];
      const windows = meters.map((m) => (m.period === 'window' ? m.windowMs : 0));
      batch = { signature: args.join('/'), args, keys, count: meters.length, windows, auditCap };
      batches.set(meters, batch);
      listOf.set(batch, meters);
    }
    return batch;
  }
  // A turn's settles ride with an admission call of the same meters when there is one (no call of their own).
  const admissions = createAdmitBatcher(
    (args, late, more, meterKeyList) => {
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
    },
    setImmediate,
    (batch) => {
      const meters = listOf.get(batch);
      return meters === undefined ? undefined : settles.take(meters);
    },
  );
  const settles = createSettleBatcher(
    (args, keys) => run(SCRIPTS.settle, [String(keys.length), ...keys, ...args]),
    auditCap,
    (meters) => [...meterBatch(meters).keys.slice(0, meters.length * 3), auditKey],
    PERIOD,
    (meters, part) => admissions.carry(meterBatch(meters), part),
  );
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
    async meterStatus(meters) {
      const batch = meterBatch(meters);
      const reply = (await run(SCRIPTS.meterStatus, [
        String(meters.length * 3),
        ...batch.keys.slice(0, meters.length * 3),
        ...batch.args,
      ])) as unknown[];
      const used: number[] = [];
      const resetMs: number[] = [];
      for (let i = 0; i < meters.length; i++) {
        used.push(Number(reply[2 * i]));
        resetMs.push(Number(reply[2 * i + 1]));
      }
      return { used, resetMs, month: String(reply[2 * meters.length]) };
    },
    async setMeter(meter, units) {
      await run(SCRIPTS.setMeter, [
        '4',
        ...meterKeys(options.project, options.keyName, meter.name, options.session),
        meterSetKey,
        meter.name,
        String(meter.windowMs),
        PERIOD[meter.period],
        String(units),
      ]);
    },
    async resetMeters(windows, counts) {
      const names = (await send(['SMEMBERS', meterSetKey])) as string[];
      if (names.length === 0) return;
      const keys = names.flatMap((name) => meterKeys(options.project, options.keyName, name, options.session));
      await run(SCRIPTS.resetMeters, [String(keys.length), ...keys, windows ? '1' : '0', counts ? '1' : '0']);
    },
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
    async close() {
      admissions.flush(); // what this turn asked goes before the connection closes
      settles.flush();
      clearInterval(sweep);
      await closeClient();
    },
  };
}

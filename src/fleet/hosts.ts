import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { script, type FleetConnection } from './connection.js';
import type { FleetKeys } from './keys.js';

/** A host as the store keeps it (`mockapi fleet status` lists them). */
export interface HostEntry {
  id: string;
  /** The URL it answers on. */
  address: string;
  hostname: string;
  pid: number;
  /** mockapi's version. */
  version: string;
  /** sha256 of the config it serves (as `/__mockapi/health`'s `revision`). */
  config: string;
  /** When it registered, and when it last said it is there: ms since the epoch, on Redis's clock. */
  started: number;
  seen: number;
}

/** A host that has not said it is there for this long is taken for gone (it says so every {@link HEARTBEAT_MS}). */
export const GONE_AFTER_MS = 10_000;
export const HEARTBEAT_MS = 2_000;
/** A host gone this long is dropped from the list. */
const FORGET_AFTER_MS = 3_600_000;

// Sets this host's entry with Redis's time, drops the long gone, answers every entry and the time.
const BEAT = script(`
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local entry = cjson.decode(ARGV[1])
entry.seen = now
if entry.started == 0 then entry.started = now end
redis.call('HSET', KEYS[1], entry.id, cjson.encode(entry))
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local ok, other = pcall(cjson.decode, all[i + 1])
  if ok and type(other) == 'table' and type(other.seen) == 'number' and now - other.seen > tonumber(ARGV[2]) then
    redis.call('HDEL', KEYS[1], all[i])
  else
    out[#out + 1] = all[i + 1]
  end
end
return { tostring(now), out }
`);

/** Reads the host entries of a hash as Redis gave them (HGETALL values, or the beat's list); damaged ones are skipped. */
export function readHosts(values: unknown[]): HostEntry[] {
  const hosts: HostEntry[] = [];
  for (const value of values) {
    try {
      const h = JSON.parse(String(value)) as HostEntry;
      if (typeof h.id === 'string' && typeof h.seen === 'number' && typeof h.config === 'string') hosts.push(h);
    } catch {
      // another version's or a damaged entry: not a host this one can show
    }
  }
  return hosts.sort((a, b) => a.started - b.started || a.id.localeCompare(b.id));
}

/** Lists the hosts of a fleet (alive or not), and Redis's time. */
export async function listHosts(conn: FleetConnection, keys: FleetKeys): Promise<{ now: number; hosts: HostEntry[] }> {
  const [time, values] = (await Promise.all([conn.send(['TIME']), conn.send(['HVALS', keys.hosts])])) as [
    string[],
    unknown[],
  ];
  return { now: Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000), hosts: readHosts(values) };
}

export const shortHash = (hash: string): string => hash.slice(0, 12);

/** The host's registration: a heartbeat, and a warning for each host that serves another config. */
export interface HostRegistration {
  readonly id: string;
  /** Settles once the first heartbeat was answered (or failed: Redis away). */
  readonly first: Promise<void>;
  /** The hosts alive now (after one more heartbeat), this one included. */
  alive(): Promise<HostEntry[]>;
  /** The config this host serves changed (a reload): said at once. */
  configChanged(revision: string): void;
  close(): Promise<void>;
}

/** A new host id: the machine, the process and a few random bytes (a restarted process is a new host). */
export function newHostId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

export function registerHost(
  conn: FleetConnection,
  keys: FleetKeys,
  self: Omit<HostEntry, 'seen' | 'started'> & { started?: number },
  logger: Logger,
): HostRegistration {
  const entry: HostEntry = { ...self, started: 0, seen: 0 };
  const warned = new Set<string>();
  let last: HostEntry[] = [];
  let lastNow = 0;
  let closed = false;
  const beat = async (): Promise<void> => {
    if (!conn.up || closed) return;
    const [now, values] = (await conn.run(BEAT, [keys.hosts], [JSON.stringify(entry), String(FORGET_AFTER_MS)])) as [
      string,
      unknown[],
    ];
    last = readHosts(values);
    lastNow = Number(now);
    const mine = last.find((h) => h.id === entry.id);
    if (mine !== undefined) entry.started = mine.started;
    warnDifferent(Number(now));
  };
  // A host's entry says what it served at its last heartbeat, so right after a reload (a rotation
  // reaches every host at once, a saved file each watcher in its own time) this host, which beats at
  // once with its new config, still reads the others' old one. A difference is told only when it
  // lasts: seen again a heartbeat later, after the other host said it is there again since.
  const differing = new Map<string, { seen: number; since: number }>();
  const warnDifferent = (now: number): void => {
    const still = new Set<string>();
    for (const other of last) {
      if (other.id === entry.id || now - other.seen > GONE_AFTER_MS || other.config === entry.config) continue;
      const key = `${other.id} ${other.config} ${entry.config}`;
      still.add(key);
      if (warned.has(key)) continue;
      const first = differing.get(key);
      if (first === undefined) differing.set(key, { seen: other.seen, since: now });
      if (first === undefined || other.seen <= first.seen || now - first.since < HEARTBEAT_MS) continue;
      warned.add(key);
      logger.warn(
        `fleet: host ${other.address} (${other.hostname}) serves config ${shortHash(other.config)}, this host ${shortHash(entry.config)}: hosts of one fleet share stubs, resources and the journal but each serves its own file, and different files are not merged; give every host the same config`,
      );
    }
    for (const key of differing.keys()) if (!still.has(key)) differing.delete(key);
  };
  const timer = setInterval(() => void beat().catch(() => {}), HEARTBEAT_MS);
  timer.unref();
  const first = beat().catch(() => {});
  conn.onUp(() => void beat().catch(() => {}));
  return {
    id: entry.id,
    first,
    async alive() {
      await beat().catch(() => {});
      return last.filter((h) => lastNow - h.seen <= GONE_AFTER_MS);
    },
    configChanged(revision) {
      entry.config = revision;
      void beat().catch(() => {});
    },
    async close() {
      closed = true;
      clearInterval(timer);
      if (conn.up) await conn.send(['HDEL', keys.hosts, entry.id]).catch(() => {});
    },
  };
}

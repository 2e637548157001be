import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { script, type FleetConnection } from './connection.js';

/** One write that puts back a piece of the fleet's state this host holds; none replaces what Redis has. */
export type Refill =
  /** HSETNX. */
  | { op: 'hash'; key: string; field: string; value: string }
  /** ZADD NX. */
  | { op: 'zset'; key: string; member: string; score: number }
  /** A counter: set to `value` unless it holds more already. */
  | { op: 'atLeast'; key: string; value: number };

/** An epoch set by a host that knew none (it started while Redis was away, or the fleet is new): it put nothing back. */
const FRESH = 'fresh:';

// KEYS: epoch, guard hash, the keys written. ARGV: new epoch, guard field ('' for none), then 4 per
// write: op, index in KEYS, field, value. Answers {'ok', epoch} (put back), {'taken', epoch} (another
// host put back its copy first) or {'gone', ''} (the guard is not in Redis: a dropped session).
const REFILL = script(`
local now = redis.call('GET', KEYS[1])
if now and string.sub(now, 1, ${FRESH.length}) ~= '${FRESH}' then return { 'taken', now } end
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return { 'gone', '' } end
redis.call('SET', KEYS[1], ARGV[1])
for i = 3, #ARGV, 4 do
  local op, key, field, value = ARGV[i], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3]
  if op == 'hash' then redis.call('HSETNX', key, field, value)
  elseif op == 'zset' then redis.call('ZADD', key, 'NX', value, field)
  elseif tonumber(redis.call('GET', key) or '0') < tonumber(value) then redis.call('SET', key, value) end
end
return { 'ok', ARGV[1] }
`);

export interface GenerationOptions {
  /** The scope's epoch key: set when a host first meets the fleet there, gone when Redis lost its data. */
  key: string;
  /** A named session's scope: put back only while the fleet still has the session (`sessions` hash, `id`). */
  guard?: { sessions: string; id: string };
  /** Settles once the checks this one depends on did (a session's waits for the fleet's own, which puts the sessions back). */
  after?: () => Promise<void>;
  /** Another host may have caught up before this one put back (it started while Redis was away): told to catch up again. */
  refilled(): void;
  logger: Logger;
  /** How the scope is named in a line ('' for the default session). */
  name: string;
}

/**
 * Tells an empty restart of Redis from "nothing there yet", for one scope (the fleet's own state, or
 * a named session's): an epoch key, set when a host first meets the fleet and known by every host
 * since. A host that finds Redis back without the epoch it knew (no persistence, a failover without
 * it) puts back what it holds — its stubs, sessions, scenario states — in one script, before the
 * parts catch up as they do after any reconnection; the first host to do so sets a new epoch, and a
 * host that comes after takes what Redis holds then (no stub twice, none deleted since put back).
 */
export function createGeneration(conn: FleetConnection, options: GenerationOptions) {
  const parts = new Set<() => Refill[]>();
  let known: string | undefined;
  let current: Promise<void> = Promise.resolve();

  async function refill(): Promise<void> {
    const writes = [...parts].flatMap((part) => part());
    const keys = [options.key, options.guard?.sessions ?? options.key];
    const args = [randomBytes(8).toString('hex'), options.guard?.id ?? ''];
    for (const write of writes) {
      let at = keys.indexOf(write.key);
      if (at === -1) at = keys.push(write.key) - 1;
      const [field, value] =
        write.op === 'hash'
          ? [write.field, write.value]
          : write.op === 'zset'
            ? [write.member, String(write.score)]
            : ['', String(write.value)];
      args.push(write.op, String(at + 1), field, value);
    }
    const [result, epoch] = (await conn.run(REFILL, keys, args)) as [string, string];
    if (result === 'gone') return;
    known = epoch;
    if (result !== 'ok') return;
    options.refilled();
    if (writes.length > 0)
      options.logger.info(
        `fleet: Redis came back without the fleet's state${options.name === '' ? '' : ` of session ${options.name}`}; put back what this host held (${writes.length} entr${writes.length === 1 ? 'y' : 'ies'})`,
      );
  }

  async function check(): Promise<void> {
    await options.after?.();
    if (!conn.up) return;
    const now = (await conn.send(['GET', options.key])) as string | null;
    if (now !== null && now === known) return;
    if (known === undefined) {
      // First met here: this host held nothing of the fleet's yet (what it made alone, its parts share).
      if (now !== null) return void (known = now);
      const mine = `${FRESH}${randomBytes(8).toString('hex')}`;
      const set = await conn.send(['SET', options.key, mine, 'NX']);
      known = set === null ? (((await conn.send(['GET', options.key])) as string | null) ?? undefined) : mine;
      return;
    }
    // Redis lost the epoch this host knew: empty, or put back by another host already.
    if (now === null || now.startsWith(FRESH)) await refill();
    else known = now;
  }

  return {
    /** What a part of the scope holds, put back when Redis lost it. */
    hold(part: () => Refill[]): void {
      parts.add(part);
    },
    /** Reads the epoch (at join, and each time Redis is back) and puts back what this host holds when Redis lost it. */
    check(): Promise<void> {
      current = check();
      return current;
    },
    /** Settles once the check in flight did. */
    settled: (): Promise<void> => current.catch(() => {}),
  };
}

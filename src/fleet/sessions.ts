import type { Logger } from '../logger.js';
import type { SessionBacking, SharedSession } from '../sessions/registry.js';
import type { Bus } from './bus.js';
import { pairsOf, script, type FleetConnection } from './connection.js';
import type { Refill } from './generation.js';
import type { FleetKeys } from './keys.js';

/** A session's own keys under `{mockapi:<project>}:fleet:s:<id>` (see keys.ts), which a drop deletes. */
const OWN = [
  'journal',
  'counts',
  'answers',
  'marks',
  'requests',
  'stubs',
  'stub-left',
  'stub-hits',
  'stub-names',
  'stub-seq',
  'scenarios',
  'clock',
  'epoch',
];
/**
 * The limits' keys of a session hang from `{mockapi:<project>}:s:<id>` (state/limit-script.ts), and
 * those of each key of `keys:` from `…:s:<id>:key:<name>`: under each, the rate window, the month,
 * the sets of the endpoints and meters it counted in, and each of those endpoints' windows and
 * meters' lists (state/meter-script.ts). A drop deletes them all: the sets name the endpoints and
 * meters, the config names the keys.
 */
const LIMITS = ['window', 'meta', 'usage', 'eps', 'meters', 'audit'];

// Lua: deletes the session's own keys and its counts; `names`: the key names of `keys:`.
const DELETE_OWN = `
local function forget_counts(tag)
  for _, ep in ipairs(redis.call('SMEMBERS', tag .. ':eps')) do
    redis.call('DEL', tag .. ':ep:' .. ep .. ':window', tag .. ':ep:' .. ep .. ':meta')
  end
  for _, m in ipairs(redis.call('SMEMBERS', tag .. ':meters')) do
    redis.call('DEL', tag .. ':meter:' .. m .. ':list', tag .. ':meter:' .. m .. ':amounts', tag .. ':meter:' .. m .. ':meta')
  end
  for _, part in ipairs({${LIMITS.map((k) => `'${k}'`).join(', ')}}) do redis.call('DEL', tag .. ':' .. part) end
end
local function forget(id, fleet, limits, names)
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  for _, part in ipairs({${OWN.map((k) => `'${k}'`).join(', ')}}) do redis.call('DEL', fleet .. id .. ':' .. part) end
  forget_counts(limits .. id)
  for _, name in ipairs(names) do forget_counts(limits .. id .. ':key:' .. name) end
end
`;

// KEYS: sessions, seen. ARGV: id, record, max, now, entered ('1': a request made it; one that exists is fine).
const CREATE = script(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if ARGV[5] == '1' then redis.call('ZADD', KEYS[2], 'GT', ARGV[4], ARGV[1]) return 'ok' end
  return 'exists'
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 'ok'
`);

// KEYS: sessions, seen. ARGV: fleet prefix, limits prefix, N, N key names, ids…
const DROP = script(`${DELETE_OWN}
local n = tonumber(ARGV[3])
local names = {}
for i = 1, n do names[i] = ARGV[3 + i] end
for i = 4 + n, #ARGV do forget(ARGV[i], ARGV[1], ARGV[2], names) end
return 1
`);

// KEYS: sessions, seen. ARGV: fleet prefix, limits prefix, before, at most, N, N key names. Answers the ids dropped.
const EXPIRE = script(`${DELETE_OWN}
local n = tonumber(ARGV[5])
local names = {}
for i = 1, n do names[i] = ARGV[5 + i] end
local ids = redis.call('ZRANGE', KEYS[2], '-inf', '(' .. ARGV[3], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(ids) do forget(id, ARGV[1], ARGV[2], names) end
return ids
`);

/** Sessions a sweep drops at most at once (the next sweep takes the rest). */
const EXPIRE_BATCH = 1000;

function readSession(id: string, text: string): SharedSession | undefined {
  try {
    const record = JSON.parse(text) as { created?: unknown; key?: unknown };
    if (typeof record.created !== 'number') return undefined;
    return { id, created: record.created, ...(typeof record.key === 'string' ? { key: record.key } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The fleet's sessions in Redis: a hash of their records (when made, the digest of a key made for
 * one) and a sorted set of when a host last saw each used. Made and dropped through a script (so
 * `sessions.max` holds across hosts) and told on the fleet's channel, answered once every host
 * applied it. A session costs its record and its score until it is used; its own keys (journal,
 * stubs, clock…) are made by use and deleted with it.
 */
export function createSessionBacking(
  conn: FleetConnection,
  keys: FleetKeys,
  bus: Bus,
  logger: Logger,
  keyNames: () => readonly string[] = () => [],
  hold?: (part: () => Refill[]) => void,
): SessionBacking {
  const two = [keys.sessions, keys.sessionSeen];
  const fleetPrefix = keys.journal.replace(/:journal$/, ':s:');
  const limitsPrefix = fleetPrefix.replace(/:fleet:s:$/, ':s:');
  const record = (s: SharedSession): string =>
    JSON.stringify({ created: s.created, ...(s.key === undefined ? {} : { key: s.key }) });
  const made = async (session: SharedSession, max: number, entered: boolean): Promise<string> => {
    const result = String(
      await conn.run(CREATE, two, [session.id, record(session), String(max), String(Date.now()), entered ? '1' : '']),
    );
    if (result === 'ok') await bus.announce({ op: 'session-add', session });
    return result;
  };
  return {
    create: async (session, max) => (await made(session, max, false)) as 'ok' | 'exists' | 'full',
    entered: async (session, max) => ((await made(session, max, true)) === 'full' ? 'full' : 'ok'),
    async drop(ids) {
      const names = keyNames();
      await conn.run(DROP, two, [fleetPrefix, limitsPrefix, String(names.length), ...names, ...ids]);
      await bus.announce({ op: 'session-drop', ids });
    },
    hold(list) {
      // Put back in a Redis that restarted empty (generation.ts): the sessions this host knew as the fleet's.
      hold?.(() =>
        list().flatMap((s): Refill[] => [
          { op: 'hash', key: keys.sessions, field: s.id, value: record(s) },
          { op: 'zset', key: keys.sessionSeen, member: s.id, score: Date.now() },
        ]),
      );
    },
    async seen(uses) {
      const args: string[] = [];
      for (const [id, at] of uses) args.push(String(at), id);
      // XX: a session dropped meanwhile is not made again; GT: the latest use any host saw.
      await conn.send(['ZADD', keys.sessionSeen, 'XX', 'GT', ...args]);
    },
    async expire(before) {
      const names = keyNames();
      const ids = await conn.run(EXPIRE, two, [
        fleetPrefix,
        limitsPrefix,
        String(before),
        String(EXPIRE_BATCH),
        String(names.length),
        ...names,
      ]);
      return Array.isArray(ids) ? ids.map(String) : [];
    },
    async list(shown) {
      const out: SharedSession[] = [];
      for (const [id, text] of pairsOf(await conn.send(['HGETALL', keys.sessions]))) {
        const session = readSession(id, text);
        if (session !== undefined) out.push(session);
        else
          logger.warn(
            shown(
              `fleet: skipped session ${id} kept in the fleet's Redis: it is damaged, or in a format this version of mockapi does not read`,
            ),
          );
      }
      return out;
    },
    async requests(ids) {
      const counts = (await conn.send(['MGET', ...ids.map((id) => `${fleetPrefix}${id}:requests`)])) as unknown[];
      return new Map(ids.map((id, i) => [id, Number(counts[i] ?? 0) || 0]));
    },
    listen(events) {
      bus.handle('session-add', (change) => {
        const s = change.session as SharedSession | undefined;
        if (typeof s?.id === 'string' && typeof s.created === 'number') events.added(s);
      });
      bus.handle('session-drop', (change) => {
        if (Array.isArray(change.ids)) events.dropped(change.ids.map(String));
      });
    },
  };
}

import { createHash } from 'node:crypto';

/**
 * The Lua scripts of the Redis resource store: each write is one script, so that what two
 * processes do to one object never interleaves. Keys of one project share a hash tag
 * (`{mockapi:<project>}`), so a script's keys are in one slot of a cluster.
 *
 * Per collection `C` (`{mockapi:<project>}:res:<scope>:<name>`): `C:o` (id → JSON text), `C:m`
 * (id → `version:seq:since:created:parent`), `C:ord` (ids by seq), `C:seq` (the last seq),
 * `C:h:<id>` (history entries, JSON, the last 50), `C:draw` (the last number a create's retry drew),
 * `C:gone` (the ids of deleted objects by seq, the newest 10,000: cursors that still have a place).
 */

export interface Script {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });

/** KEYS: C:o, C:m. ARGV: id. → {text, meta} or {false, false}. */
export const GET = script(`
return {redis.call('HGET', KEYS[1], ARGV[1]), redis.call('HGET', KEYS[2], ARGV[1])}
`);

/**
 * KEYS: C:o, C:m, C:ord, C:seq, C:h:<id>, names set, C:gone. ARGV: id, text, since, created, parent,
 * history JSON, history limit, collection name. → the new seq, or false when the id is taken.
 */
export const CREATE = script(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return false end
redis.call('ZREM', KEYS[7], ARGV[1])
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], '1:' .. seq .. ':' .. ARGV[3] .. ':' .. ARGV[4] .. ':' .. ARGV[5])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('DEL', KEYS[5])
redis.call('RPUSH', KEYS[5], ARGV[6])
redis.call('SADD', KEYS[6], ARGV[8])
return seq
`);

/**
 * KEYS: C:o, C:m, C:h:<id>. ARGV: id, expected version, text, since, history JSON, history limit.
 * → the new meta, 'missing', or 'conflict'.
 */
export const REPLACE = script(`
local meta = redis.call('HGET', KEYS[2], ARGV[1])
if not meta then return 'missing' end
local version, seq, since, created, parent = string.match(meta, '^(%d+):(%d+):(-?%d+):(-?%d+):(.*)$')
if version ~= ARGV[2] then return 'conflict' end
local next = (tonumber(version) + 1) .. ':' .. seq .. ':' .. ARGV[4] .. ':' .. created .. ':' .. parent
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], next)
redis.call('RPUSH', KEYS[3], ARGV[5])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[6]), -1)
return next
`);

/**
 * KEYS: C:o, C:m, C:ord, C:h:<id>, C:gone. ARGV: id, how many deleted ids to keep. → {text, meta}
 * of what was removed, or {false, false}. The id goes to C:gone with its seq.
 */
export const DELETE = script(`
local text = redis.call('HGET', KEYS[1], ARGV[1])
local meta = redis.call('HGET', KEYS[2], ARGV[1])
if not text then return {false, false} end
local seq = redis.call('ZSCORE', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[4])
if seq then
  redis.call('ZADD', KEYS[5], seq, ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -tonumber(ARGV[2]) - 1)
end
return {text, meta}
`);

/**
 * KEYS: C:o, C:m, C:ord, C:seq, seeded set, names set, C:draw, C:gone. ARGV: name, history key
 * prefix. Empties the collection and forgets it was seeded.
 */
export const CLEAR = script(`
for _, id in ipairs(redis.call('HKEYS', KEYS[1])) do redis.call('DEL', ARGV[2] .. id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[7], KEYS[8])
redis.call('SREM', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
return 1
`);

/**
 * KEYS: C:draw, C:seq. → a number above the seq and above every number this gave before: a create's
 * try after its id was taken, unique among the creates that run side by side.
 */
export const TICKET = script(`
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local n = redis.call('INCR', KEYS[1])
if n <= seq then
  n = seq + 1
  redis.call('SET', KEYS[1], n)
end
return n
`);

/**
 * KEYS: due (zset), due by object (hash). ARGV: object key, member (object key + version), due
 * ('' to cancel). Replaces the object's earlier schedule.
 */
export const SCHEDULE = script(`
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then redis.call('ZREM', KEYS[1], old) end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
`);

/** KEYS: due, due by object. ARGV: now, limit. Members are `<object key>#<version>`. → members and scores due, each taken once. */
export const TAKE_DUE = script(`
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for i = 1, #found, 2 do
  local member = found[i]
  redis.call('ZREM', KEYS[1], member)
  local object = string.match(member, '^(.*)#%d+$')
  if redis.call('HGET', KEYS[2], object) == member then redis.call('HDEL', KEYS[2], object) end
  out[#out + 1] = member
  out[#out + 1] = found[i + 1]
end
return out
`);

/**
 * KEYS: the key's record. ARGV: now, ttl ms, record of a new claim (`expires|pending|fingerprint`).
 * → the record held (unexpired), or false when the key was free (now claimed).
 */
export const CLAIM_KEY = script(`
local held = redis.call('GET', KEYS[1])
if held then
  local expires = tonumber(string.match(held, '^(-?%d+)|'))
  if expires and expires > tonumber(ARGV[1]) then return held end
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
return false
`);

/** KEYS: the key's record. Lets go of a pending claim. */
export const RELEASE_KEY = script(`
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^-?%d+|pending|') then redis.call('DEL', KEYS[1]) end
return 1
`);

/** KEYS: C:m, C:h:<id>. ARGV: id, version, request. Names the request in the last history entry when the object is still at that version. */
export const TAG = script(`
local meta = redis.call('HGET', KEYS[1], ARGV[1])
if not meta or string.match(meta, '^(%d+):') ~= ARGV[2] then return 0 end
local last = redis.call('LINDEX', KEYS[2], -1)
if not last then return 0 end
local entry = cjson.decode(last)
entry['request'] = tonumber(ARGV[3])
redis.call('LSET', KEYS[2], -1, cjson.encode(entry))
return 1
`);

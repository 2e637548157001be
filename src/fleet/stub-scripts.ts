/**
 * The Redis scripts of a fleet's run-time stubs (src/fleet/stubs.ts) and the record format they
 * keep: each stub's record (`"<seq> <json>"`), its `times` left, its name and its hits.
 */
import type { StubRecord } from '../stubs/store.js';
import { script } from './connection.js';

// KEYS: stubs, left, names, seq. ARGV: id, record (JSON), name ('' for none), times ('' for none).
// Answers {'ok', seq} or {'name', <id of the stub that has the name>}. A record is kept as "<seq> <json>".
export const ADD = script(`
if ARGV[3] ~= '' then
  local other = redis.call('HGET', KEYS[3], ARGV[3])
  if other and other ~= ARGV[1] then return { 'name', other } end
end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], ARGV[1], seq .. ' ' .. ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[3], ARGV[1]) end
return { 'ok', seq }
`);

// Lua: drops the stub ARGV[1] (its record, its count, its hits, its name). KEYS[4]: the hits.
const DROP = `
local function drop(id)
  local rec = redis.call('HGET', KEYS[1], id)
  if rec then
    local space = string.find(rec, ' ')
    local ok, r = pcall(cjson.decode, string.sub(rec, (space or 0) + 1))
    if ok and type(r) == 'table' and type(r.name) == 'string' and redis.call('HGET', KEYS[3], r.name) == id then redis.call('HDEL', KEYS[3], r.name) end
  end
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
end
`;

// KEYS: stubs, left, names, hits. ARGV: id.
export const REMOVE = script(`${DROP}
drop(ARGV[1])
return 1
`);

// KEYS: stubs, left, names, hits. ARGV: id. Answers the answers left after this one (counting it
// among the stub's hits), -1 when none was left, -2 when Redis does not hold the stub (its last
// answer was taken, or it was removed or flushed, and this host has not applied that yet).
export const CLAIM = script(`${DROP}
local left = redis.call('HGET', KEYS[2], ARGV[1])
if not left then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return -1 end
  return -2
end
left = tonumber(left)
if left <= 0 then return -1 end
left = redis.call('HINCRBY', KEYS[2], ARGV[1], -1)
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
if left <= 0 then drop(ARGV[1]) end
return left
`);

/** A claim Redis did not answer (away, or past the command timeout): the host counts alone. */
export const UNANSWERED = -3;

/** A stub record as Redis keeps it: `"<seq> <json>"`. Undefined for a damaged one. */
export function readRecord(value: unknown): StubRecord | undefined {
  const text = String(value);
  const space = text.indexOf(' ');
  try {
    const record = JSON.parse(text.slice(space + 1)) as StubRecord;
    const seq = Number(text.slice(0, space));
    if (!Number.isSafeInteger(seq) || typeof record.id !== 'string' || typeof record.endpoint !== 'object')
      return undefined;
    return { ...record, seq };
  } catch {
    return undefined;
  }
}

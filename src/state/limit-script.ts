import { createHash } from 'node:crypto';
import { WINDOW_LUA } from './window-lua.js';

/**
 * The Redis side of the shared limits: Lua scripts that run atomically inside Redis, so
 * every server of a project that uses the store sees one rate window and one month's count. Pure
 * text and key names here; src/state/redis-store.ts sends them.
 *
 * Keys of a project, all with the hash tag `{mockapi:<project>}` so they live in one slot and one
 * script may touch them all on Redis Cluster:
 * - `…:window`, `…:meta` — the rate window (see src/state/window-lua.ts);
 * - `…:usage` — hash: `YYYY-MM` (UTC) → requests counted that month;
 * - `…:ep:<id>:window`, `…:ep:<id>:meta` — an endpoint's own window for this key (`id`: see
 *   {@link endpointId}), and `…:eps` — the set of the ids whose window held something since the last reset (for the next).
 */

/**
 * The keys of `project` in the order the scripts take them. A key of `keys:` has its own, named by
 * the key's name (never its text): `{mockapi:<project>}:key:<name>:window`, in the project's slot.
 * The fourth is the set of endpoint ids with a window of that key.
 */
export function storeKeys(
  project: string,
  keyName?: string,
  session?: string,
): [window: string, meta: string, usage: string, endpoints: string] {
  const tag = keyPrefix(project, keyName, session);
  return [`${tag}:window`, `${tag}:meta`, `${tag}:usage`, `${tag}:eps`];
}

/**
 * `{mockapi:<project>}`, or `{mockapi:<project>}:key:<name>` for a key of `keys:`: the one place the
 * scope of a key's counts is made (its window, month, endpoint windows and meters all hang from
 * it), so a wider scope (a session) can be put in front of it here alone.
 */
export function keyPrefix(project: string, keyName: string | undefined, session?: string): string {
  // A named session of a fleet: `{mockapi:<project>}:s:<id>`, its keys' under it.
  const scope = session === undefined ? `{mockapi:${project}}` : `{mockapi:${project}}:s:${session}`;
  return keyName === undefined ? scope : `${scope}:key:${keyName}`;
}

/**
 * An endpoint's id in Redis keys: the first 16 hex digits of the SHA-256 of its route
 * (`GET /users/:id`) — stable across servers and restarts, and safe in a key whatever the path holds.
 */
export function endpointId(route: string): string {
  return createHash('sha256').update(route).digest('hex').slice(0, 16);
}

/** The window and meta keys of the endpoint `id` for a key (the project's own for `apiKey`). */
export function endpointKeys(
  project: string,
  keyName: string | undefined,
  id: string,
  session?: string,
): [window: string, meta: string] {
  const tag = `${keyPrefix(project, keyName, session)}:ep:${id}`;
  return [`${tag}:window`, `${tag}:meta`];
}

/**
 * Calendar arithmetic on days since 1970-01-01 (H. Hinnant's civil algorithms), and Redis's clock:
 * Redis 7 replicates a script's effects, not the script, so a script may read `TIME`.
 */
export const PRELUDE = `
local function civil(days)
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m
end
local function days_from_civil(y, m)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = math.floor((153 * mp + 2) / 5)
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local year, mon = civil(math.floor(now / 86400000))
local month = string.format('%04d-%02d', year, mon)
`;

/**
 * The check-and-count of a batch of requests (those one server received in the same turn of its
 * event loop, with the same limits): the sliding window (exact, as src/pipeline/rate-limit.ts), the
 * endpoints' own windows of this key, and the month's count, decided one request after the other
 * and recorded in one atomic step with Redis's clock — one command for the batch, so Redis reads
 * the clock, the windows' ends and the month once, and writes them once. Deciding them in order at
 * one instant gives what as many single-request scripts run back to back would.
 *
 * A request goes through its endpoint's window first (when it has one): refused there, it counts in
 * nothing else; then the key's window, then the month: refused by either, it counts in neither nor
 * in the endpoint's window. The headers describe the window closer to full (fewer remaining; on a
 * tie, the key's unless the endpoint's resets later).
 *
 * KEYS: window, meta, usage; with endpoint windows also the set of this key's endpoint ids, then
 * each endpoint's window and meta. ARGV: requests (0 = no rate limit), window ms, monthly quota
 * (0 = none), count (the requests of the batch; absent: 1); with endpoint windows also their number
 * E, E triples `id, requests, window ms`, then for each request the 1-based endpoint it goes
 * through (0: none). Returns, for each request in order, five numbers `outcome, limit, remaining,
 * resetSeconds, retryAfterSeconds`, outcome 0 admitted, 1 rate limited, 2 quota exceeded; `limit`
 * 0 when no window applies. As in-process: a refused request counts in nothing; a quota 429 shows
 * the windows as checked, before counting.
 */
export const ADMIT_SCRIPT = `${PRELUDE}${WINDOW_LUA}
local plan = open_window(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
local quota = tonumber(ARGV[3])
local count = tonumber(ARGV[4]) or 1
local eps = {}
local n_eps = tonumber(ARGV[5]) or 0
for i = 1, n_eps do
  local a = 6 + (i - 1) * 3
  local w = open_window(KEYS[3 + 2 * i], KEYS[4 + 2 * i], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]))
  w.id = ARGV[a]
  eps[i] = w
end
local first_ep = 6 + n_eps * 3 -- ARGV index of the first request's endpoint
-- Every window opened (each may have moved now forward): trim them at the same now.
trim(plan)
for i = 1, n_eps do
  trim(eps[i])
  eps[i].fresh = eps[i].counted == 0
end
local out = {}
local function push(outcome, limit, left, reset, retry_after)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = outcome, limit, left, reset, retry_after
end
-- The headers of the window closer to full (see closest in src/state/window-lua.ts).
local function push_closest(outcome, e, retry_after)
  local limit, left, reset = closest(plan, e)
  push(outcome, limit, left, reset, retry_after)
end
local admitted = 0
local used -- the month's count, read once the first request passes the windows
local retry -- Retry-After of a quota 429: until the next month (UTC)
local full_reset -- reset of a rate-limit 429: once full, the window stays as it is for the batch
for r = 1, count do
  local e = eps[tonumber(ARGV[first_ep + r - 1]) or 0]
  if e ~= nil and e.requests > 0 and e.counted >= e.requests then
    if e.full_reset == nil then e.full_reset = reset_seconds(e) end
    push(1, e.requests, 0, e.full_reset, math.max(1, e.full_reset))
  elseif plan.requests > 0 and plan.counted >= plan.requests then
    -- The endpoint's window has room: the key's, full, is the closer to full.
    if full_reset == nil then full_reset = reset_seconds(plan) end
    push(1, plan.requests, 0, full_reset, math.max(1, full_reset))
  else
    if used == nil then used = tonumber(redis.call('HGET', KEYS[3], month)) or 0 end
    if quota > 0 and used >= quota then
      if retry == nil then
        local next_month = days_from_civil(mon == 12 and year + 1 or year, mon == 12 and 1 or mon + 1) * 86400000
        retry = math.max(1, math.ceil((next_month - now) / 1000))
      end
      push_closest(2, e, retry)
    else
      used = used + 1
      admitted = admitted + 1
      if plan.requests > 0 then count_one(plan) end
      if e ~= nil then count_one(e) end
      push_closest(0, e, 0)
    end
  end
end
if admitted > 0 then redis.call('HINCRBY', KEYS[3], month, admitted) end
save_window(plan)
for i = 1, n_eps do
  local e = eps[i]
  save_window(e)
  -- Listed for POST /__mockapi/reset, which empties every endpoint window of the key.
  if e.fresh and e.admitted > 0 then redis.call('SADD', KEYS[4], e.id) end
end
return out
`;

/** KEYS: usage. Returns `{ month, requests }`: the month (UTC) by Redis's clock and its count. */
export const USAGE_SCRIPT = `${PRELUDE}
return { month, tonumber(redis.call('HGET', KEYS[1], month)) or 0 }
`;

/**
 * What `GET /__mockapi/usage` shows with a store: the month and its count, and the window as the
 * next request would find it, counting nothing (it drops what left the window, as an admission
 * would). KEYS and ARGV as {@link ADMIT_SCRIPT} without the quota. Returns `{ month, requests,
 * limit, remaining, resetSeconds }`, `limit` 0 when no rate limit is configured.
 */
export const STATUS_SCRIPT = `${PRELUDE}${WINDOW_LUA}
local plan = open_window(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
trim(plan)
save_trim(plan)
local used = tonumber(redis.call('HGET', KEYS[3], month)) or 0
if plan.requests == 0 then return { month, used, 0, 0, 0 } end
return { month, used, plan.requests, remaining(plan), reset_seconds(plan) }
`;

/** KEYS: usage. Zeroes the month (by Redis's clock) for every server at once; returns `{ month, requests before }`. */
export const RESET_USAGE_SCRIPT = `${PRELUDE}
local before = tonumber(redis.call('HGET', KEYS[1], month)) or 0
redis.call('HDEL', KEYS[1], month)
return { month, before }
`;

/**
 * KEYS: usage. ARGV: n. Counts n requests in this month (by Redis's clock) that had no limit to
 * decide: a server's count-only admissions of one event-loop turn (see `count` in
 * state/redis-store.ts). Returns n, so the server knows how many the call carried.
 */
export const COUNT_SCRIPT = `${PRELUDE}
local n = tonumber(ARGV[1])
redis.call('HINCRBY', KEYS[1], month, n)
return n
`;

/**
 * KEYS: usage. ARGV: month (empty: this month by Redis's clock), n. Adds what a server counted on
 * its own while the store was down (`storeDown: open`), or, with a negative n, takes back what the
 * store counted for requests that were answered without it; never below 0 (a reset may have come
 * between).
 */
export const ADD_USAGE_SCRIPT = `${PRELUDE}
local m = ARGV[1] ~= '' and ARGV[1] or month
local n = redis.call('HINCRBY', KEYS[1], m, ARGV[2])
if n < 0 then
  redis.call('HSET', KEYS[1], m, 0)
  n = 0
end
return n
`;

/**
 * Empties a key's rate window and every endpoint window of that key. KEYS: window, meta, the set of
 * endpoint ids, then the window and meta of each id in ARGV (the set's members, read just before).
 * An id added to the set since (a window opened meanwhile) stays listed.
 */
export const RESET_WINDOWS_SCRIPT = `
for i = 1, #KEYS do
  if i ~= 3 then redis.call('DEL', KEYS[i]) end
end
for i = 1, #ARGV do redis.call('SREM', KEYS[3], ARGV[i]) end
return #ARGV
`;

/**
 * The Redis side of the shared limits: Lua scripts that run atomically inside Redis, so
 * every server of a project that uses the store sees one rate window and one month's count. Pure
 * text and key names here; src/state/redis-store.ts sends them.
 *
 * Keys of a project, all with the hash tag `{mockapi:<project>}` so they live in one slot and one
 * script may touch them all on Redis Cluster:
 * - `…:window` — list of admissions inside the window, oldest first, one `"<ms>:<count>"` entry per
 *   distinct millisecond (as the in-process limiter's slots: memory follows the distinct times the
 *   window holds, not `requests`);
 * - `…:meta` — hash: `last` (the latest time a script used, so time never goes backwards for the
 *   window), `counted` (admissions the list holds, kept beside it so no request sums the list), and
 *   `head`, `tail`, `tailn` (the list's oldest time, newest time and its count: most requests then
 *   read no list entry);
 * - `…:usage` — hash: `YYYY-MM` (UTC) → requests counted that month.
 */

/**
 * The keys of `project` in the order the scripts take them. A key of `keys:` has its own, named by
 * the key's name (never its text): `{mockapi:<project>}:key:<name>:window`, in the project's slot.
 */
export function storeKeys(project: string, keyName?: string): [window: string, meta: string, usage: string] {
  const tag = keyName === undefined ? `{mockapi:${project}}` : `{mockapi:${project}}:key:${keyName}`;
  return [`${tag}:window`, `${tag}:meta`, `${tag}:usage`];
}

/**
 * Calendar arithmetic on days since 1970-01-01 (H. Hinnant's civil algorithms), and Redis's clock:
 * Redis 7 replicates a script's effects, not the script, so a script may read `TIME`.
 */
const PRELUDE = `
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
 * The window as of now, shared by the admit and status scripts: drops (and saves, with
 * `save_trim`) what left it; `remaining()` and `reset_seconds()` say what the headers would.
 * KEYS: window, meta, usage. ARGV: requests (0 = no rate limit), window ms.
 */
const WINDOW = `
local requests = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local counted = 0
-- The list's oldest and newest entries, kept in meta so that most requests read no list at all.
local head_ms, tail_ms, tail_n
local trimmed = false
local function entry(text)
  local sep = string.find(text, ':', 1, true)
  return tonumber(string.sub(text, 1, sep - 1)), tonumber(string.sub(text, sep + 1))
end
if requests > 0 then
  local meta = redis.call('HMGET', KEYS[2], 'last', 'counted', 'head', 'tail', 'tailn')
  local last = tonumber(meta[1])
  -- Redis's clock may step back (an NTP correction, a failover): the window then stands still.
  if last ~= nil and now < last then now = last end
  counted = tonumber(meta[2]) or 0
  head_ms, tail_ms, tail_n = tonumber(meta[3]), tonumber(meta[4]), tonumber(meta[5])
  if counted > 0 and (head_ms == nil or tail_n == nil) then
    -- Keys an older mockapi wrote (meta without the ends): read them from the list once.
    local first = redis.call('LINDEX', KEYS[1], 0)
    local final = redis.call('LINDEX', KEYS[1], -1)
    if first then head_ms = entry(first) else counted = 0 end
    if final then tail_ms, tail_n = entry(final) end
  end
  local edge = now - window
  while counted > 0 and head_ms <= edge do
    trimmed = true
    local head = redis.call('LPOP', KEYS[1])
    if not head then counted = 0 break end
    local _, n = entry(head)
    counted = counted - n
    if counted > 0 then
      local next_head = redis.call('LINDEX', KEYS[1], 0)
      if not next_head then counted = 0 break end
      head_ms = entry(next_head)
    end
  end
  if counted <= 0 then counted, head_ms, tail_ms, tail_n = 0, nil, nil, nil end
end

-- What trimming changed, written back when the request is not counted (counting writes it anyway).
local function save_trim()
  if not trimmed then return end
  if counted == 0 then redis.call('HSET', KEYS[2], 'counted', 0)
  else redis.call('HSET', KEYS[2], 'counted', counted, 'head', head_ms) end
end

local function reset_seconds()
  if counted <= 0 then return 0 end
  local from
  if counted <= requests then
    from = head_ms
  else
    -- Above the limit (a reload lowered it): a slot frees once the requests-th newest has left.
    local newer, stop = 0, -1
    while from == nil do
      local chunk = redis.call('LRANGE', KEYS[1], stop - 99, stop)
      if #chunk == 0 then break end
      for i = #chunk, 1, -1 do
        local sep = string.find(chunk[i], ':', 1, true)
        newer = newer + tonumber(string.sub(chunk[i], sep + 1))
        if newer >= requests then from = tonumber(string.sub(chunk[i], 1, sep - 1)) break end
      end
      stop = stop - 100
    end
    if from == nil then return 0 end
  end
  local ms = from + window - now
  if ms <= 0 then return 0 end
  return math.ceil(ms / 1000)
end

local function remaining()
  if counted < requests then return requests - counted end
  return 0
end
`;

/**
 * The check-and-count of a batch of requests (those one server received in the same turn of its
 * event loop, with the same limits): the sliding window (exact, as src/pipeline/rate-limit.ts) and
 * the month's count, decided one request after the other and recorded in one atomic step with
 * Redis's clock — one command for the batch, so Redis reads the clock, the window's ends and the
 * month once, and writes them once. Deciding them in order at one instant gives what as many
 * single-request scripts run back to back would.
 *
 * KEYS: window, meta, usage. ARGV: requests (0 = no rate limit), window ms, monthly quota (0 = none),
 * count (the requests of the batch; absent: 1). Returns, for each request in order, five numbers
 * `outcome, limit, remaining, resetSeconds, retryAfterSeconds`, outcome 0 admitted, 1 rate limited,
 * 2 quota exceeded; `limit` 0 when no rate limit is configured. As in-process: a refused request
 * counts in neither; a quota 429 shows the window as checked, before counting.
 */
export const ADMIT_SCRIPT = `${PRELUDE}${WINDOW}
local quota = tonumber(ARGV[3])
local count = tonumber(ARGV[4]) or 1
local out = {}
local function push(outcome, limit, left, reset, retry_after)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = outcome, limit, left, reset, retry_after
end
local admitted = 0
local used -- the month's count, read once the first request passes the window
local retry -- Retry-After of a quota 429: until the next month (UTC)
local full_reset -- reset of a rate-limit 429: once full, the window stays as it is for the batch
for _ = 1, count do
  if requests > 0 and counted >= requests then
    if full_reset == nil then full_reset = reset_seconds() end
    push(1, requests, 0, full_reset, math.max(1, full_reset))
  else
    if used == nil then used = tonumber(redis.call('HGET', KEYS[3], month)) or 0 end
    if quota > 0 and used >= quota then
      if retry == nil then
        local next_month = days_from_civil(mon == 12 and year + 1 or year, mon == 12 and 1 or mon + 1) * 86400000
        retry = math.max(1, math.ceil((next_month - now) / 1000))
      end
      if requests == 0 then
        push(2, 0, 0, 0, retry)
      else
        push(2, requests, remaining(), reset_seconds(), retry)
      end
    else
      used = used + 1
      admitted = admitted + 1
      if requests == 0 then
        push(0, 0, 0, 0, 0)
      else
        counted = counted + 1
        if head_ms == nil then head_ms = now end
        push(0, requests, remaining(), reset_seconds(), 0)
      end
    end
  end
end
if admitted > 0 then redis.call('HINCRBY', KEYS[3], month, admitted) end
if requests == 0 then return out end
if admitted == 0 then
  save_trim()
  return out
end
if tail_ms == now then
  tail_n = tail_n + admitted
  redis.call('LSET', KEYS[1], -1, now .. ':' .. tail_n)
else
  tail_ms, tail_n = now, admitted
  redis.call('RPUSH', KEYS[1], now .. ':' .. admitted)
  -- Nothing is left to count once a window has passed without an admission: let the keys go.
  -- Set with each new millisecond's entry (requests of the same millisecond share it).
  redis.call('PEXPIREAT', KEYS[1], now + window + 1000)
  redis.call('PEXPIREAT', KEYS[2], now + window + 1000)
end
redis.call('HSET', KEYS[2], 'last', now, 'counted', counted, 'head', head_ms, 'tail', tail_ms, 'tailn', tail_n)
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
export const STATUS_SCRIPT = `${PRELUDE}${WINDOW}
save_trim()
local used = tonumber(redis.call('HGET', KEYS[3], month)) or 0
if requests == 0 then return { month, used, 0, 0, 0 } end
return { month, used, requests, remaining(), reset_seconds() }
`;

/** KEYS: usage. Zeroes the month (by Redis's clock) for every server at once; returns `{ month, requests before }`. */
export const RESET_USAGE_SCRIPT = `${PRELUDE}
local before = tonumber(redis.call('HGET', KEYS[1], month)) or 0
redis.call('HDEL', KEYS[1], month)
return { month, before }
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

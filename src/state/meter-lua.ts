/**
 * Meters in Redis (see src/pipeline/meters.ts for what they count), as Lua functions shared by the
 * metered admit script and the settle and status scripts of src/state/meter-script.ts. Needs
 * `now` and `month` (Redis's clock) declared before it.
 *
 * A meter has three keys (see `meterKeys`): `…:list`, the distinct milliseconds at which its window
 * admitted something, oldest first; `…:amounts`, a hash of those milliseconds to what they admitted
 * (integers, millionths); `…:meta`, a hash of `used` (what the window holds), `head` (its oldest
 * millisecond), `tail` (its newest: a later call of that millisecond adds to its amount), `expires`
 * (when the list and amounts expire, at least a window after `tail`) and `last` (the latest time a
 * script used: time never goes back for it), and the
 * month counts `m:YYYY-MM` and `total` of a `month` or `total` meter. A settle corrects the amount of
 * its admission's millisecond while that is still in the window, so a refund leaves the window with
 * the reservation it corrects.
 *
 * A meter's arguments: name, limit, window ms (0 for month and total), period (`w`, `m` or `t`).
 */
export const METER_LUA = `
local function open_meter(keys, limit, window, period)
  local m = { list = keys[1], amounts = keys[2], meta = keys[3], limit = limit, window = window, period = period, used = 0, added = 0, trimmed = false, opened = true }
  if period == 'w' then
    local v = redis.call('HMGET', m.meta, 'last', 'used', 'head', 'tail', 'expires')
    local last = tonumber(v[1])
    if last ~= nil and now < last then now = last end
    m.used, m.head, m.tail, m.expires = tonumber(v[2]) or 0, tonumber(v[3]), tonumber(v[4]), tonumber(v[5]) or 0
    m.fresh = v[1] == false
  else
    m.field = period == 'm' and ('m:' .. month) or 'total'
    local v = redis.call('HGET', m.meta, m.field)
    m.used = tonumber(v) or 0
    m.fresh = v == false
  end
  return m
end

-- Drops what left the window as of now.
local function trim_meter(m)
  if m.period ~= 'w' then return end
  local edge = now - m.window
  while m.head ~= nil and m.head <= edge do
    m.trimmed = true
    local t = redis.call('LPOP', m.list)
    if not t then m.head = nil break end
    m.used = m.used - (tonumber(redis.call('HGET', m.amounts, t)) or 0)
    redis.call('HDEL', m.amounts, t)
    local nxt = redis.call('LINDEX', m.list, 0)
    m.head = nxt and tonumber(nxt) or nil
  end
  if m.head == nil then m.used = 0 end
end

-- Milliseconds until r fits a full window: what leaves it by then makes room.
local function meter_wait(m, r)
  if m.entries == nil then
    m.entries = {}
    local times = redis.call('LRANGE', m.list, 0, -1)
    if #times > 0 then
      local amounts = redis.call('HMGET', m.amounts, unpack(times))
      for i = 1, #times do m.entries[i] = { tonumber(times[i]), tonumber(amounts[i]) or 0 } end
    end
  end
  local left = m.used
  for i = 1, #m.entries do
    left = left - m.entries[i][2]
    if left + r <= m.limit then return math.max(1, m.entries[i][1] + m.window - now) end
  end
  -- Only what this call admitted (at now) is left: it leaves a window from now.
  return math.max(1, m.window)
end

-- Worked out once per call (a window's only changes when its first amount is counted).
local function meter_reset_ms(m)
  if m.reset ~= nil then return m.reset end
  if m.period == 'w' then
    m.reset = m.head == nil and 0 or math.max(0, m.head + m.window - now)
  elseif m.period == 'm' then
    m.reset = days_from_civil(mon == 12 and year + 1 or year, mon == 12 and 1 or mon + 1) * 86400000 - now
  else
    m.reset = 0
  end
  return m.reset
end

-- Corrects an admission counted at \`admitted\` (ms) in the month \`mon_of\` by d (settle − reserve):
-- a window's amount of that millisecond while it is still in the window (a refund then leaves the
-- window with the reservation it corrects), the count of the month it was counted in, a total;
-- never below 0. Returns whether it applied.
-- An opened meter (open_meter) takes the change in what it holds, written by save_meter; a meter
-- not opened (the settle script's: nothing else to do) has it written here.
local function settle_meter(m, admitted, mon_of, d)
  if m.period == 'w' then
    if redis.call('HEXISTS', m.amounts, admitted) == 0 then return false end
    redis.call('HINCRBY', m.amounts, admitted, d)
    if m.opened then
      m.used = m.used + d
      m.settled = true
    else
      redis.call('HINCRBY', m.meta, 'used', d)
    end
    return true
  end
  local field = m.period == 'm' and ('m:' .. mon_of) or 'total'
  if field ~= m.field then
    if redis.call('HINCRBY', m.meta, field, d) < 0 then redis.call('HSET', m.meta, field, 0) end
    return true
  end
  local v = math.max(0, m.used + d)
  m.added = m.added + v - m.used
  m.used = v
  return true
end

-- Applies the settles of ARGV from index \`at\`: S, then per settle \`admitted ms, month\` and a
-- delta per meter (millionths; 0: none); each one applied is noted in \`audit\` when \`audited\`.
local function apply_settles(meters, at, audit, audited)
  local n_m = #meters
  local count = tonumber(ARGV[at]) or 0
  at = at + 1
  for s = 1, count do
    local admitted, mon_of = ARGV[at], ARGV[at + 1]
    for i = 1, n_m do
      local text = ARGV[at + 1 + i]
      local d = tonumber(text)
      if d ~= 0 and settle_meter(meters[i], admitted, mon_of, d) and audited then
        audit[#audit + 1] = 's|' .. meters[i].name .. '|' .. admitted .. '|' .. text .. '|' .. now
      end
    end
    at = at + 2 + n_m
  end
  return count
end

-- Writes what this call counted (or what trimming or settles changed).
local function save_meter(m)
  if m.period ~= 'w' then
    if m.added ~= 0 then redis.call('HINCRBY', m.meta, m.field, m.added) end
    return
  end
  if m.added == 0 then
    if m.trimmed and m.head == nil then
      redis.call('HSET', m.meta, 'used', 0, 'last', now)
      redis.call('HDEL', m.meta, 'head')
    elseif m.trimmed then
      redis.call('HSET', m.meta, 'used', m.used, 'head', m.head)
    elseif m.settled then
      redis.call('HSET', m.meta, 'used', m.used)
    end
    return
  end
  -- Added to (not set): a millisecond an older mockapi counted without a tail keeps its amount.
  redis.call('HINCRBY', m.amounts, now, m.added)
  if m.tail ~= now then
    redis.call('RPUSH', m.list, now)
    -- Nothing is left to count once a window has passed without an admission: let the keys go.
    -- Set a whole window further than needed, so that the next window's calls do not set it again.
    if m.expires < now + m.window + 1000 then
      m.expires = now + 2 * m.window + 1000
      redis.call('PEXPIREAT', m.list, m.expires)
      redis.call('PEXPIREAT', m.amounts, m.expires)
    end
  end
  redis.call('HSET', m.meta, 'used', m.used, 'head', m.head, 'last', now, 'tail', now, 'expires', m.expires)
end
`;

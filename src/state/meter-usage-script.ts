/**
 * The scripts of a key's meters as usage reads and changes them (the admin API, `mockapi usage`):
 * their status, one set to a value, all reset.
 */
import { METER_LUA } from './meter-lua.js';
import { PRELUDE } from './limit-script.js';

/**
 * The meters of a key as the next request would find them, counting nothing (windows trimmed).
 * KEYS: each meter's three keys. ARGV: M quads `name, limit, window ms, period`. Returns `used,
 * resetMs` per meter, then the month.
 */
export const METER_STATUS_SCRIPT = `${PRELUDE}${METER_LUA}
local n_m = tonumber(ARGV[1])
local out = {}
for i = 1, n_m do
  local b = 2 + (i - 1) * 4
  local k = (i - 1) * 3
  local m = open_meter({ KEYS[k + 1], KEYS[k + 2], KEYS[k + 3] }, tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), ARGV[b + 3])
  trim_meter(m)
  save_meter(m)
  out[#out + 1] = m.used
  out[#out + 1] = meter_reset_ms(m)
end
out[#out + 1] = month
return out
`;

/**
 * Sets one meter (`POST /__mockapi/usage {"meter","value"}`): a window holds the value at now, a
 * month or total is the value. KEYS: the meter's three keys, the key's set of meters. ARGV: name,
 * window ms, period, value (millionths).
 */
export const SET_METER_SCRIPT = `${PRELUDE}
local list, amounts, meta = KEYS[1], KEYS[2], KEYS[3]
local window, period, value = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
if period == 'w' then
  redis.call('DEL', list, amounts)
  if value > 0 then
    redis.call('RPUSH', list, now)
    redis.call('HSET', amounts, now, value)
    redis.call('HSET', meta, 'used', value, 'head', now, 'last', now, 'tail', now, 'expires', now + window + 1000)
    for _, key in ipairs({ list, amounts }) do redis.call('PEXPIREAT', key, now + window + 1000) end
  else
    redis.call('HSET', meta, 'used', 0, 'last', now)
    redis.call('HDEL', meta, 'head', 'tail', 'expires')
  end
else
  redis.call('HSET', meta, period == 'm' and ('m:' .. month) or 'total', value)
end
redis.call('SADD', KEYS[4], ARGV[1])
return value
`;

/**
 * Empties a key's meters: their windows (with the rate window's reset) and/or their months and
 * totals (with the usage's). KEYS: each meter's three keys. ARGV: windows (1/0), counts (1/0).
 */
export const RESET_METERS_SCRIPT = `
local windows, counts = ARGV[1] == '1', ARGV[2] == '1'
for i = 1, #KEYS, 3 do
  local list, amounts, meta = KEYS[i], KEYS[i + 1], KEYS[i + 2]
  if windows then
    redis.call('DEL', list, amounts)
    redis.call('HDEL', meta, 'used', 'head', 'tail', 'expires')
  end
  if counts then
    local fields = redis.call('HKEYS', meta)
    for _, f in ipairs(fields) do
      if f == 'total' or string.sub(f, 1, 2) == 'm:' then redis.call('HDEL', meta, f) end
    end
  end
end
return #KEYS / 3
`;

/**
 * The settle script of meters: admissions corrected by settle − reserve when no admission call of
 * the same meters carries them (see METERED_ADMIT_SCRIPT in meter-script.ts).
 */
import { METER_LUA } from './meter-lua.js';
import { PRELUDE } from './limit-script.js';

/**
 * Settles admissions when no admission call of the same meters goes to Redis in the same turn
 * (those carry the settles themselves, see METERED_ADMIT_SCRIPT): each corrects its meters by
 * settle − reserve (see settle_meter in src/state/meter-lua.ts). KEYS: each meter's three keys, then
 * the audit list. ARGV: M, M pairs `name, period`, the audit cap, S, then per settle `admitted ms,
 * month` and its M deltas.
 */
export const SETTLE_SCRIPT = `${PRELUDE}${METER_LUA}
local n_m = tonumber(ARGV[1])
local meters = {}
for i = 1, n_m do
  local k = (i - 1) * 3
  -- Not opened: a settle reads nothing it does not change.
  meters[i] = { list = KEYS[k + 1], amounts = KEYS[k + 2], meta = KEYS[k + 3], period = ARGV[1 + i * 2], name = ARGV[i * 2] }
end
local audit_cap = tonumber(ARGV[2 + n_m * 2])
local audit = {}
local count = apply_settles(meters, 3 + n_m * 2, audit, audit_cap > 0)
if #audit > 0 then
  local audit_key = KEYS[n_m * 3 + 1]
  for i = 1, #audit, 1000 do redis.call('RPUSH', audit_key, unpack(audit, i, math.min(i + 999, #audit))) end
  redis.call('LTRIM', audit_key, -audit_cap, -1)
end
return count
`;

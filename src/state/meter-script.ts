import { METER_LUA } from './meter-lua.js';
import { keyPrefix, PRELUDE } from './limit-script.js';
import { WINDOW_LUA } from './window-lua.js';

/*
 * The Redis side of meters (src/pipeline/meters.ts counts the same in one process): the metered
 * admit script, which decides the request window, the endpoint windows, the month and every meter
 * of a key in one atomic call, and the settle, status, set and reset scripts; beside the plain
 * scripts of src/state/limit-script.ts. src/state/redis-store.ts sends them. The settle script is in
 * meter-settle-script.ts; the status, set and reset scripts in meter-usage-script.ts.
 */

/**
 * The keys of a meter of a key: its window's milliseconds, their amounts, and its meta (window sum,
 * month and total counts); see src/state/meter-lua.ts. Meter names are letters, digits, `_` and `-`.
 */
export function meterKeys(
  project: string,
  keyName: string | undefined,
  meter: string,
  session?: string,
): [list: string, amounts: string, meta: string] {
  const tag = `${keyPrefix(project, keyName, session)}:meter:${meter}`;
  return [`${tag}:list`, `${tag}:amounts`, `${tag}:meta`];
}

/** The set of the meters a key counted in (for a reset), and its audit list (see {@link METERED_ADMIT_SCRIPT}). */
export function meterSetKeys(
  project: string,
  keyName: string | undefined,
  session?: string,
): [meters: string, audit: string] {
  const tag = keyPrefix(project, keyName, session);
  return [`${tag}:meters`, `${tag}:audit`];
}

/**
 * {@link ADMIT_SCRIPT} with meters: the request window, the endpoint windows, the month and every
 * meter of the key decided together, one request after the other, in one atomic call.
 *
 * KEYS: window, meta, usage, the set of endpoint ids, each endpoint's window and meta, each meter's
 * three keys (see src/state/meter-lua.ts), then the set of the key's meters and its audit list.
 * ARGV: requests, window ms, quota, count, E, E triples, (when E > 0) each request's endpoint, then
 * M, M quads `name, limit, window ms, period`, then each request's M reserves (millionths; -1: the
 * request does not ask that meter), then the audit cap (0: no audit), then the settles of earlier
 * admissions of these meters that the server ended since its last call, as SETTLE_SCRIPT takes
 * them (S, then per settle `admitted ms, month` and M deltas), applied first: the settle of a
 * request is then no call of its own while requests keep coming. Returns, for each request,
 * the five numbers of ADMIT_SCRIPT `outcome, limit, remaining, resetSeconds, retryAfterSeconds`,
 * outcome 0 admitted, 1 rate limited, 2 quota exceeded, 3 a meter's window is full, 4 a reserve
 * that can never fit, 5 a spent meter — followed, for 3 to 5 only, by the meter (1-based) and its
 * wait (ms); then each meter's `used, resetMs` as the call found it (windows trimmed, before it
 * counted anything), the time the call counted at (ms) and its month. What each meter holds after
 * each request follows from those and the reserves of the requests admitted before it, in order
 * (src/state/admit-call.ts works it out): a meter's per-request numbers are not written here, as
 * Lua builds and Redis sends each number of a reply one at a time.
 *
 * With an audit cap, every admission is appended to the audit list (`r|<ms>` for the request
 * window, `a|<meter>|<ms>|<amount>`), and every settle (`s|<meter>|<admitted ms>|<delta>|<ms>`),
 * capped at that many entries: what a test replays to prove no window ever admitted more than its
 * limit, whatever the machine's speed.
 */
export const METERED_ADMIT_SCRIPT = `${PRELUDE}${WINDOW_LUA}${METER_LUA}
local plan = open_window(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
local quota = tonumber(ARGV[3])
local count = tonumber(ARGV[4])
local n_eps = tonumber(ARGV[5])
local eps = {}
for i = 1, n_eps do
  local a = 6 + (i - 1) * 3
  local w = open_window(KEYS[3 + 2 * i], KEYS[4 + 2 * i], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]))
  w.id = ARGV[a]
  eps[i] = w
end
local first_ep = 6 + n_eps * 3
local at = first_ep + (n_eps > 0 and count or 0)
local n_m = tonumber(ARGV[at])
local meters = {}
for i = 1, n_m do
  local b = at + 1 + (i - 1) * 4
  local k = 4 + 2 * n_eps + (i - 1) * 3
  local m = open_meter({ KEYS[k + 1], KEYS[k + 2], KEYS[k + 3] }, tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), ARGV[b + 3])
  m.name = ARGV[b]
  meters[i] = m
end
local first_r = at + 1 + n_m * 4
local audit_cap = tonumber(ARGV[first_r + count * n_m]) or 0
local set_key = KEYS[4 + 2 * n_eps + 3 * n_m + 1]
local audit_key = KEYS[4 + 2 * n_eps + 3 * n_m + 2]
trim(plan)
for i = 1, n_eps do
  trim(eps[i])
  eps[i].fresh = eps[i].counted == 0
end
for i = 1, n_m do trim_meter(meters[i]) end
-- The settles of earlier admissions that the server ended since its last call, before this call's admissions.
local audit = {}
local audited = audit_cap > 0
apply_settles(meters, first_r + count * n_m + 1, audit, audited)
local found = {}
for i = 1, n_m do found[2 * i - 1], found[2 * i] = meters[i].used, meter_reset_ms(meters[i]) end
local out, n = {}, 0
local admitted = 0
local used -- the month's count, read once the first request passes the windows
local retry -- Retry-After of a quota 429: until the next month (UTC)
local full_reset -- reset of a rate-limit 429: once full, the window stays as it is for the batch
-- A request's reserves (q), each read as a number once per distinct text (an endpoint's fixed reserves are the same text).
local q, text, value = {}, {}, {}
for r = 1, count do
  local e = n_eps > 0 and eps[tonumber(ARGV[first_ep + r - 1])] or nil
  local outcome, limit, left, reset, retry_after = 0, 0, 0, 0, 0
  local refused, wait = 0, 0
  if e ~= nil and e.requests > 0 and e.counted >= e.requests then
    if e.full_reset == nil then e.full_reset = reset_seconds(e) end
    outcome, limit, reset, retry_after = 1, e.requests, e.full_reset, math.max(1, e.full_reset)
  elseif plan.requests > 0 and plan.counted >= plan.requests then
    if full_reset == nil then full_reset = reset_seconds(plan) end
    outcome, limit, reset, retry_after = 1, plan.requests, full_reset, math.max(1, full_reset)
  else
    if used == nil then used = tonumber(redis.call('HGET', KEYS[3], month)) or 0 end
    if quota > 0 and used >= quota then
      if retry == nil then
        local next_month = days_from_civil(mon == 12 and year + 1 or year, mon == 12 and 1 or mon + 1) * 86400000
        retry = math.max(1, math.ceil((next_month - now) / 1000))
      end
      outcome, retry_after = 2, retry
    else
      -- A reserve over the whole limit never fits; a spent budget does not come back by waiting; then a window to wait for.
      local never, spent, full = 0, 0, 0
      local base = first_r + (r - 1) * n_m - 1
      for i = 1, n_m do
        local s = ARGV[base + i]
        if s ~= text[i] then text[i], value[i] = s, tonumber(s) end
        local qi = value[i]
        q[i] = qi
        if qi >= 0 then
          local m = meters[i]
          local limit_i = m.limit
          if qi > limit_i then
            if never == 0 then never = i end
          -- A spent month or total; else a window, a month or a total that has less room than asked
          -- (the first such meter decides: a window and a month wait, a total never fits again).
          elseif m.period ~= 'w' and m.used >= limit_i then
            if spent == 0 then spent = i end
          elseif m.used + qi > limit_i then
            if full == 0 then full = i end
          end
        end
      end
      if never ~= 0 then outcome, refused = 4, never
      elseif spent ~= 0 then
        outcome, refused = 5, spent
        if meters[spent].period == 'm' then
          wait = meter_reset_ms(meters[spent])
          retry_after = math.max(1, math.ceil(wait / 1000))
        end
      elseif full ~= 0 and meters[full].period == 't' then
        outcome, refused = 4, full
      elseif full ~= 0 then
        outcome, refused = 3, full
        wait = meters[full].period == 'm' and meter_reset_ms(meters[full]) or meter_wait(meters[full], q[full])
        retry_after = math.max(1, math.ceil(wait / 1000))
      else
        used = used + 1
        admitted = admitted + 1
        if plan.requests > 0 then count_one(plan) end
        if e ~= nil then count_one(e) end
        if audited then audit[#audit + 1] = 'r|' .. now end
        for i = 1, n_m do
          local qi = q[i]
          if qi >= 0 then
            local m = meters[i]
            m.used = m.used + qi
            m.added = m.added + qi
            -- A window's first amount: it resets a window from now.
            if m.head == nil and m.period == 'w' then m.head, m.reset = now, nil end
            if audited then audit[#audit + 1] = 'a|' .. m.name .. '|' .. now .. '|' .. ARGV[base + i] end
          end
        end
      end
    end
    limit, left, reset = closest(plan, e)
  end
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = outcome, limit, left, reset, retry_after
  n = n + 5
  if refused ~= 0 then
    out[n + 1], out[n + 2] = refused, wait
    n = n + 2
  end
end
if admitted > 0 then redis.call('HINCRBY', KEYS[3], month, admitted) end
save_window(plan)
for i = 1, n_eps do
  local e = eps[i]
  save_window(e)
  if e.fresh and e.admitted > 0 then redis.call('SADD', KEYS[4], e.id) end
end
for i = 1, n_m do
  local m = meters[i]
  save_meter(m)
  if m.fresh and m.added ~= 0 then redis.call('SADD', set_key, m.name) end
end
if #audit > 0 then
  for i = 1, #audit, 1000 do redis.call('RPUSH', audit_key, unpack(audit, i, math.min(i + 999, #audit))) end
  redis.call('LTRIM', audit_key, -audit_cap, -1)
end
for i = 1, 2 * n_m do out[n + i] = found[i] end
out[n + 2 * n_m + 1] = now
out[n + 2 * n_m + 2] = month
return out
`;

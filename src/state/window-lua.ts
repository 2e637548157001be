/**
 * The sliding window in Redis, as Lua functions over one window (its list and meta keys, its
 * `requests` and window length), shared by the admit and status scripts of src/state/limit-script.ts
 * and the metered admit script of src/state/meter-script.ts.
 * A script opens every window it uses first (each may move `now` up to the latest time it was used),
 * then trims them, so every window of one call sees the same `now`.
 *
 * A window is kept as a list of `"<ms>:<count>"` entries, oldest first, one per distinct millisecond
 * (memory follows the distinct times the window holds, not `requests`), and a meta hash: `last` (the
 * latest time a script used, so time never goes backwards for the window), `counted` (admissions the
 * list holds, so no request sums the list), `head`, `tail`, `tailn` (the list's oldest time, newest
 * time and its count: most requests then read no list entry).
 *
 * Needs `now` (ms, Redis's clock) declared before it.
 */
export const WINDOW_LUA = `
local function entry(text)
  local sep = string.find(text, ':', 1, true)
  return tonumber(string.sub(text, 1, sep - 1)), tonumber(string.sub(text, sep + 1))
end

-- A window's state from its meta hash. requests 0: no window (nothing read, nothing written).
-- Redis's clock may step back (an NTP correction, a failover): the window then stands still.
local function open_window(list, meta, requests, window)
  local w = { list = list, meta = meta, requests = requests, window = window, counted = 0, trimmed = false, admitted = 0 }
  if requests <= 0 then return w end
  local m = redis.call('HMGET', meta, 'last', 'counted', 'head', 'tail', 'tailn')
  local last = tonumber(m[1])
  if last ~= nil and now < last then now = last end
  w.counted = tonumber(m[2]) or 0
  w.head, w.tail, w.tailn = tonumber(m[3]), tonumber(m[4]), tonumber(m[5])
  if w.counted > 0 and (w.head == nil or w.tailn == nil) then
    -- Keys an older mockapi wrote (meta without the ends): read them from the list once.
    local first = redis.call('LINDEX', list, 0)
    local final = redis.call('LINDEX', list, -1)
    if first then w.head = entry(first) else w.counted = 0 end
    if final then w.tail, w.tailn = entry(final) end
  end
  return w
end

-- Drops what left the window as of now.
local function trim(w)
  if w.requests <= 0 then return end
  local edge = now - w.window
  while w.counted > 0 and w.head <= edge do
    w.trimmed = true
    local head = redis.call('LPOP', w.list)
    if not head then w.counted = 0 break end
    local _, n = entry(head)
    w.counted = w.counted - n
    if w.counted > 0 then
      local next_head = redis.call('LINDEX', w.list, 0)
      if not next_head then w.counted = 0 break end
      w.head = entry(next_head)
    end
  end
  if w.counted <= 0 then w.counted, w.head, w.tail, w.tailn = 0, nil, nil, nil end
end

-- What trimming changed, written back when nothing is counted (counting writes it anyway).
local function save_trim(w)
  if not w.trimmed then return end
  if w.counted == 0 then redis.call('HSET', w.meta, 'counted', 0)
  else redis.call('HSET', w.meta, 'counted', w.counted, 'head', w.head) end
end

local function reset_seconds(w)
  if w.counted <= 0 then return 0 end
  local from
  if w.counted <= w.requests then
    from = w.head
  else
    -- Above the limit (a reload lowered it): a slot frees once the requests-th newest has left.
    local newer, stop = 0, -1
    while from == nil do
      local chunk = redis.call('LRANGE', w.list, stop - 99, stop)
      if #chunk == 0 then break end
      for i = #chunk, 1, -1 do
        local sep = string.find(chunk[i], ':', 1, true)
        newer = newer + tonumber(string.sub(chunk[i], sep + 1))
        if newer >= w.requests then from = tonumber(string.sub(chunk[i], 1, sep - 1)) break end
      end
      stop = stop - 100
    end
    if from == nil then return 0 end
  end
  local ms = from + w.window - now
  if ms <= 0 then return 0 end
  return math.ceil(ms / 1000)
end

local function remaining(w)
  if w.counted < w.requests then return w.requests - w.counted end
  return 0
end

-- The headers' window of a request through the key's window \`plan\` and its endpoint's \`e\` (or nil):
-- the one closer to full (fewer remaining; as many: the key's, unless the endpoint's resets later).
-- Returns limit (0: no window), remaining and reset seconds.
local function closest(plan, e)
  local limit, left, reset = 0, 0, 0
  if plan.requests > 0 then limit, left = plan.requests, remaining(plan) end
  if e ~= nil then
    local e_left = remaining(e)
    if limit == 0 or e_left < left then
      limit, left, reset = e.requests, e_left, reset_seconds(e)
    elseif e_left == left then
      local e_reset, p_reset = reset_seconds(e), reset_seconds(plan)
      if e_reset > p_reset then limit, reset = e.requests, e_reset else reset = p_reset end
    else
      reset = reset_seconds(plan)
    end
  elseif limit > 0 then
    reset = reset_seconds(plan)
  end
  return limit, left, reset
end

-- Counts one admission at now (written by save_window).
local function count_one(w)
  w.counted = w.counted + 1
  w.admitted = w.admitted + 1
  if w.head == nil then w.head = now end
end

-- Writes what this call counted in the window (or what trimming changed, when it counted nothing).
local function save_window(w)
  if w.requests <= 0 then return end
  if w.admitted == 0 then
    save_trim(w)
    return
  end
  if w.tail == now then
    w.tailn = w.tailn + w.admitted
    redis.call('LSET', w.list, -1, now .. ':' .. w.tailn)
  else
    w.tail, w.tailn = now, w.admitted
    redis.call('RPUSH', w.list, now .. ':' .. w.admitted)
    -- Nothing is left to count once a window has passed without an admission: let the keys go.
    -- Set with each new millisecond's entry (requests of the same millisecond share it).
    redis.call('PEXPIREAT', w.list, now + w.window + 1000)
    redis.call('PEXPIREAT', w.meta, now + w.window + 1000)
  end
  redis.call('HSET', w.meta, 'last', now, 'counted', w.counted, 'head', w.head, 'tail', w.tail, 'tailn', w.tailn)
end
`;

/**
 * The fleet's journal script (src/fleet/journal-sink.ts sends it): one call per event-loop turn of a
 * host, its entries added to the fleet's stream once, in one order for every host.
 */
import { script } from './connection.js';
import { ENTRY_FORMAT } from './journal-wire.js';

/** Entries in one script call at most; a turn with more sends several (pipelined: still one round trip). */
export const MAX_BATCH = 256;
/** Calls on their way to Redis at once: a slow Redis makes entries wait here, bounded, not in the client's queue. */
export const MAX_IN_FLIGHT = 4;

// KEYS: the stream, the counts, the writers' marks, the requests counted, the answers' counts. ARGV:
// the stream's cap, the writer, the entries' texts (one a line), then (number, endpoint, answer)
// triples. An entry whose number is not above the writer's mark was taken already (a write sent
// again after its connection broke): skipped. Counts the requests, each endpoint's and each answer's
// of an endpoint (field `<endpoint>\0<answer>`; one HINCRBY per endpoint or answer of the call, not
// per entry; a count Redis refuses — a damaged field — is left out, never the entries); adds the
// entries taken (when the journal keeps any) as one stream entry (journal-wire.ts): its id `0-*` is
// the first's, and the stream's last id is set to the last's, so the next writer goes
// on above them. Trims what is older than the newest `cap` (and one batch more, so a stream entry
// holding the oldest kept is never cut). Answers the first id ('' when none added), how many entries
// it got and how many it added. Every write that can fail (the mark's key read at the start, the
// XADD) comes before the mark is raised, and a script's writes are not undone when it fails: so a
// call that fails has added nothing and is sent again, and one that ran is never added twice.
export const ADD = script(`
local cap = tonumber(ARGV[1])
local mark = tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0')
local total = (#ARGV - 3) / 3
local taken = 0
local keep = nil
local counts = {}
local answers = {}
for i = 1, total do
  local n = tonumber(ARGV[1 + 3 * i])
  if n > mark then
    mark = n
    taken = taken + 1
    local endpoint = ARGV[2 + 3 * i]
    if endpoint ~= '' then
      counts[endpoint] = (counts[endpoint] or 0) + 1
      local answer = ARGV[3 + 3 * i]
      if answer ~= '' then
        local field = endpoint .. '\\0' .. answer
        answers[field] = (answers[field] or 0) + 1
      end
    end
    if keep then keep[#keep + 1] = i end
  elseif keep == nil then
    keep = {}
    for j = 1, i - 1 do keep[j] = j end
  end
end
local first = ''
local added = 0
if taken > 0 and cap > 0 then
  local text = ARGV[3]
  if keep then
    local lines = {}
    local at = 1
    for i = 1, total do
      local stop = string.find(text, '\\n', at, true)
      lines[i] = string.sub(text, at, (stop or 0) - 1)
      at = (stop or #text) + 1
    end
    local picked = {}
    for j, i in ipairs(keep) do picked[j] = lines[i] end
    text = table.concat(picked, '\\n')
  end
  first = redis.call('XADD', KEYS[1], '0-*', 'v', '${ENTRY_FORMAT}', 'h', ARGV[2], 'e', text)
  local last = tonumber(string.match(first, '%-(%d+)$')) + taken - 1
  if taken > 1 then redis.call('XSETID', KEYS[1], '0-' .. string.format('%d', last)) end
  local oldest = last - cap + 1 - ${MAX_BATCH}
  if oldest > 1 then redis.call('XTRIM', KEYS[1], 'MINID', '~', '0-' .. string.format('%d', oldest)) end
  added = taken
end
for endpoint, count in pairs(counts) do redis.pcall('HINCRBY', KEYS[2], endpoint, count) end
for field, count in pairs(answers) do redis.pcall('HINCRBY', KEYS[5], field, count) end
if taken > 0 then redis.pcall('INCRBY', KEYS[4], taken) end
redis.call('HSET', KEYS[3], ARGV[2], mark)
redis.call('EXPIRE', KEYS[3], 86400)
return { first, total, added }
`);

/** Where a call's texts are in its arguments (after the command, the script, the key count, five keys, the cap and the writer). */
export const TEXTS = 10;

/** The field of an answer's count in the answers' hash: the endpoint's key and the answer's name. */
export const answerField = (endpoint: string, answer: string): string => `${endpoint}\0${answer}`;

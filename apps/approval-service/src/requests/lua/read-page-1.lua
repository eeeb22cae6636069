--[[
  Reads one page of an approvals list (a sorted set of request IDs), in (score, request ID) order, strictly after a
  cursor. Read-only: a script so that the cursor's place and the page come from one state of the set, whatever
  is added or removed between pages.

  KEYS[1] the list (zset)       {tag}:pending | :notices | :decided | :expired

  ARGV[1] score of the last entry already read ('' = read from the start)
  ARGV[2] request ID of the last entry already read (need not be in the set any more)
  ARGV[3] how many entries to read (>= 0)

  Returns a flat list { requestId, score, requestId, score, ... } of at most ARGV[3] entries; scores as Redis prints them.
]]
-- Redis orders members of equal score byte by byte; Lua's `<` would compare by the server's locale.
local function isAfter(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

local key = KEYS[1]
local count = tonumber(ARGV[3])
local first = 0
if ARGV[1] ~= '' then
  -- Entries of the cursor's score hold the ranks [lo, hi): find the first whose request ID sorts after the cursor's.
  -- Each probe is O(log N), so a page costs the same however many entries share a score.
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. ARGV[1])
  local hi = lo + redis.call('ZCOUNT', key, ARGV[1], ARGV[1])
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if isAfter(redis.call('ZRANGE', key, mid, mid)[1], ARGV[2]) then hi = mid else lo = mid + 1 end
  end
  first = lo
end
if count < 1 then return {} end
return redis.call('ZRANGE', key, first, first + count - 1, 'WITHSCORES')

--[[
  Removes timers a sweep has handled, each only if it still has the score this sweep's claim gave it. Any other
  score means someone moved it since: another replica re-claimed it after the lease, an early expiry moved it
  back, or a decision turned it into a publish check. Then it is not this sweep's to remove.

  KEYS[1] due timers (zset)   {tag}:timers

  ARGV[1] the claimed score (ms)
  ARGV[2..] members

  Returns
    the number of members removed
]]
local claimed = tonumber(ARGV[1])
local removed = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == claimed then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return removed

--[[
  Claims up to ARGV[3] timers that are due, for one sweep: each claimed timer is pushed back by the lease, so
  no other replica takes it meanwhile. The claimer removes it when done (finish-timers); if the claimer dies,
  the timer is due again when the lease runs out and another sweep retries it.

  KEYS[1] due timers (zset)   {tag}:timers

  ARGV[1] now (ms)
  ARGV[2] lease (ms)
  ARGV[3] most timers to claim

  Returns
    {claimedScore, member, member, ...}   claimedScore = now + lease, the score every claimed member now has
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local claimed = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', claimed, member)
end
table.insert(due, 1, claimed)
return due

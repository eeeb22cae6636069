--[[
  Compare-and-set of one call's state, by the processing that owns the run:
  denied -> done, approved -> done (refused now, nothing ran), approved -> pending (definition
  changed, re-asked). `executing` is entered and left only through start-call, complete-call and
  settle-executing-call, which carry the execution token and heartbeat.

  KEYS[1] run hash

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] call ID
  ARGV[3] expected current state
  ARGV[4] new state
  ARGV[5] result JSON to store at c:<callId>:r ("" = leave)
  ARGV[6] new body JSON for a re-ask ("" = leave); a re-ask also forgets the old decision

  Returns
    1              transitioned
   -5              this processing no longer owns the run
   {-6, state}     the call is not in the expected state (someone else moved it)
]]
local c = 'c:' .. ARGV[2]
local owner, state = unpack(redis.call('HMGET', KEYS[1], 'owner', c .. ':s'))
if owner ~= ARGV[1] then return -5 end
if state ~= ARGV[3] then return {-6, state or ''} end

redis.call('HSET', KEYS[1], c .. ':s', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], c .. ':r', ARGV[5]) end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[1], c, ARGV[6])
  redis.call('HDEL', KEYS[1], c .. ':d')
end
return 1

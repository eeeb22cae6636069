--[[
  Compare-and-set of one call's state, by the processing that owns the run:
  denied -> done, approved -> done (refused now, nothing ran), approved -> pending (definition
  changed, re-asked). `executing` is entered and left only through start-call, complete-call and
  settle-executing-call, which carry the execution token and heartbeat.

  KEYS[1] run meta hash
  KEYS[2] run calls hash

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] call ID
  ARGV[3] expected current state
  ARGV[4] new state
  ARGV[5] result JSON to store at <callId>:r ("" = leave)
  ARGV[6] new body JSON for a re-ask ("" = leave); a re-ask also forgets the old decision

  Returns
    1              transitioned
   -5              this processing no longer owns the run
   {-6, state}     the call is not in the expected state (someone else moved it)
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return -5 end
local state = redis.call('HGET', KEYS[2], ARGV[2] .. ':s')
if state ~= ARGV[3] then return {-6, state or ''} end

redis.call('HSET', KEYS[2], ARGV[2] .. ':s', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], ARGV[2] .. ':r', ARGV[5]) end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[6])
  redis.call('HDEL', KEYS[2], ARGV[2] .. ':d')
end
return 1

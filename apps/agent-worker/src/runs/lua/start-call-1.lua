--[[
  Claims an approved call for execution (approved -> executing), by the processing that owns the run.
  The claim carries its own execution token: from here on only that token may heartbeat the call and
  record its result, whoever owns the run by then. The first heartbeat is stamped now (Redis TIME,
  so the clocks of the workers' hosts do not matter).

  KEYS[1] run hash (call fields c:<callId>:x execution token, c:<callId>:h last heartbeat, ms)

  ARGV[1] owner ("<jobId>|<token>|<started>")
  ARGV[2] call ID
  ARGV[3] execution token (fresh for this execution)

  Returns
    1              claimed: the call is executing under this token
   -5              this processing no longer owns the run
   {-6, state}     the call is not approved (someone else moved it)
]]
--- @include "includes/now-ms"

local c = 'c:' .. ARGV[2]
local owner, state = unpack(redis.call('HMGET', KEYS[1], 'owner', c .. ':s'))
if owner ~= ARGV[1] then return -5 end
if state ~= 'approved' then return {-6, state or ''} end

redis.call('HSET', KEYS[1], c .. ':s', 'executing', c .. ':x', ARGV[3], c .. ':h', nowMs())
return 1

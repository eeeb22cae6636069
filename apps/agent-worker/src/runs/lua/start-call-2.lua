--[[
  Claims an approved call for execution (approved -> executing), by the processing that owns the run.
  The claim carries its own execution token: from here on only that token may heartbeat the call and
  record its result, whoever owns the run by then. The first heartbeat is stamped now (Redis TIME,
  so the clocks of the workers' hosts do not matter).

  KEYS[1] run meta hash
  KEYS[2] run calls hash (fields: <callId>:x execution token, <callId>:h last heartbeat, ms)

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] call ID
  ARGV[3] execution token (fresh for this execution)

  Returns
    1              claimed: the call is executing under this token
   -5              this processing no longer owns the run
   {-6, state}     the call is not approved (someone else moved it)
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return -5 end
local state = redis.call('HGET', KEYS[2], ARGV[2] .. ':s')
if state ~= 'approved' then return {-6, state or ''} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[2], ARGV[2] .. ':s', 'executing', ARGV[2] .. ':x', ARGV[3], ARGV[2] .. ':h', now)
return 1

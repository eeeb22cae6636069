--[[
  Records the result of an executed call (executing -> done), guarded by the call's execution token,
  not by run ownership: a tool that ran is recorded exactly once even when the run was taken over
  while it ran (the new owner waits for this result). Says whether the caller still owns the run,
  so a caller that lost it stops there and leaves the rest of the run to the owner.

  KEYS[1] run hash

  ARGV[1] call ID
  ARGV[2] execution token (from start-call)
  ARGV[3] result JSON, stored at c:<callId>:r
  ARGV[4] owner ("<jobId>|<token>") of the caller

  Returns {code, detail}
    {1, ''}      recorded; the caller still owns the run
    {2, ''}      recorded; another processing owns the run now and continues it
   {-7, state}   the call is no longer executing under this token (it was declared interrupted and
                 asked about again): nothing recorded
]]
local c = 'c:' .. ARGV[1]
local state, token, owner = unpack(redis.call('HMGET', KEYS[1], c .. ':s', c .. ':x', 'owner'))
if state ~= 'executing' or token ~= ARGV[2] then
  return {-7, state or ''}
end
redis.call('HSET', KEYS[1], c .. ':s', 'done', c .. ':r', ARGV[3])
redis.call('HDEL', KEYS[1], c .. ':x', c .. ':h')
if owner == ARGV[4] then return {1, ''} end
return {2, ''}

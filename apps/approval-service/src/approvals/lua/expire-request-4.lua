--[[
  Expires a pending request (deny, decided by "expired") or retires a manual-step notice.

  KEYS[1] the call's hash     {tag}:call:<callId>
  KEYS[2] pending set         {tag}:pending
  KEYS[3] expired set         {tag}:expired
  KEYS[4] notices set         {tag}:notices

  ARGV[1] attempt the timer was set for
  ARGV[2] now (ms)
  ARGV[3] now (ISO 8601)
  ARGV[4] retention of a settled call (ms)

  Returns
    {1, requestJSON}    expired now: a deny must be published
    {2}                 a notice retired (nothing to publish)
    {3, msLeft}         not due yet (the timer fired early): try again later
    {0, status}         nothing to do: missing, superseded, or already settled (status says which)
]]
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, 'missing'} end
if redis.call('HGET', KEYS[1], 'attempt') ~= ARGV[1] then return {0, 'superseded'} end
local callId = redis.call('HGET', KEYS[1], 'callId')
local now = tonumber(ARGV[2])
local left = tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) - now
if status ~= 'pending' and status ~= 'notice' then return {0, status} end
if left > 0 then return {3, left} end
if status == 'notice' then
  redis.call('ZREM', KEYS[4], callId)
  redis.call('HSET', KEYS[1], 'status', 'expired')
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {2}
end
redis.call('HSET', KEYS[1], 'status', 'expired', 'outcomeDecision', 'deny', 'outcomeDecidedBy', 'expired',
  'outcomeApprovers', '', 'outcomeReason', 'expired', 'outcomeAt', ARGV[3])
redis.call('ZREM', KEYS[2], callId)
redis.call('ZADD', KEYS[3], now, callId)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, redis.call('HGET', KEYS[1], 'request')}

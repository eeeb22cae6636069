--[[
  Expires a pending request (deny, decided by "expired") or retires a manual-step notice.

  KEYS[1] the request's hash  {tag}:request:<requestId>
  KEYS[2] pending set         {tag}:pending
  KEYS[3] expired set         {tag}:expired
  KEYS[4] notices set         {tag}:notices
  KEYS[5] due timers (zset)   {tag}:timers

  ARGV[1] JSON object (ExpireRequestArgs in timer-store.ts):
    attempt          attempt the timer was set for (number)
    now              now (ms)
    nowIso           now (ISO 8601)
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms)

  Timers: an early run moves the expiry timer back to the expiry. A retired notice has nothing left to do, so
  its expiry timer is removed. An expired request's escalation timer is removed and its expiry timer becomes
  the publish check (due at now + publishCheckMs, removed by mark-published), so a deny that is recorded here
  but never published is published by a later sweep (@app/requests/settle-request).

  Returns
    {1, requestJSON}    expired now: a deny must be published
    {2}                 a notice retired (nothing to publish)
    {3, msLeft}         not due yet (the timer fired early): the expiry timer is moved to the expiry
    {0, status}         nothing to do: missing, superseded, or already settled (status says which)
]]
--- @include "@app/requests/timer-member"
--- @include "@app/requests/settle-request"

local args = cjson.decode(ARGV[1])
local attempt = tostring(args.attempt)
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, 'missing'} end
if redis.call('HGET', KEYS[1], 'attempt') ~= attempt then return {0, 'superseded'} end
local requestId = redis.call('HGET', KEYS[1], 'requestId')
local now = tonumber(args.now)
local left = tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) - now
if status ~= 'pending' and status ~= 'notice' then return {0, status} end
local expireTimer = timerMember('expire', requestId, attempt)
if left > 0 then
  redis.call('ZADD', KEYS[5], now + left, expireTimer)
  return {3, left}
end
if status == 'notice' then
  redis.call('ZREM', KEYS[4], requestId)
  redis.call('ZREM', KEYS[5], expireTimer)
  redis.call('HSET', KEYS[1], 'status', 'expired')
  redis.call('PEXPIRE', KEYS[1], args.retentionMs)
  return {2}
end
redis.call('HSET', KEYS[1], 'status', 'expired', 'outcomeDecision', 'deny', 'outcomeDecidedBy', 'expired',
  'outcomeApprovers', '', 'outcomeReason', 'expired', 'outcomeAt', args.nowIso)
settleRequest({request = KEYS[1], pending = KEYS[2], settled = KEYS[3], timers = KEYS[5]}, requestId, attempt, now,
  args.retentionMs, args.publishCheckMs)
return {1, redis.call('HGET', KEYS[1], 'request')}

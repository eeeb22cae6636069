--[[
  Settles a pending call (decided by votes, or expired), after its hash has the outcome: the call moves from the
  pending set to `keys.settled` (decided or expired, scored by now), its hash is kept for `retentionMs`, its
  escalation timer goes, and its expiry timer becomes the publish check: due at now + publishCheckMs, removed
  by mark-published once the decision is out. If the settling replica dies before that, the sweep finds the
  decision recorded but not published and publishes it.

  keys: {call = the call's hash, pending = pending set, settled = decided or expired set, timers = due timers}
]]
--- @include "timer-member"

local function settleCall(keys, callId, attempt, now, retentionMs, publishCheckMs)
  redis.call('ZREM', keys.pending, callId)
  redis.call('ZADD', keys.settled, now, callId)
  redis.call('PEXPIRE', keys.call, retentionMs)
  redis.call('ZADD', keys.timers, now + publishCheckMs, timerMember('expire', callId, attempt))
  redis.call('ZREM', keys.timers, timerMember('escalate', callId, attempt))
end

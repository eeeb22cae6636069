--[[
  Settles a pending request (decided by votes, or expired), after its hash has the outcome: the request moves from
  the pending set to `keys.settled` (decided or expired, scored by now), its hash is kept for `retentionMs`, its
  escalation timer goes, and its expiry timer becomes the publish check: due at now + publishCheckMs, removed
  by mark-published once the decision is out. If the settling replica dies before that, the sweep finds the
  decision recorded but not published and publishes it.

  keys: {request = the request's hash, pending = pending set, settled = decided or expired set, timers = due timers}
]]
--- @include "timer-member"

local function settleRequest(keys, requestId, attempt, now, retentionMs, publishCheckMs)
  redis.call('ZREM', keys.pending, requestId)
  redis.call('ZADD', keys.settled, now, requestId)
  redis.call('PEXPIRE', keys.request, retentionMs)
  redis.call('ZADD', keys.timers, now + publishCheckMs, timerMember('expire', requestId, attempt))
  redis.call('ZREM', keys.timers, timerMember('escalate', requestId, attempt))
end

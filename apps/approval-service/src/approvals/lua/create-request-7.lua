--[[
  Stores a new approval request (or a newer attempt of the same call), idempotently, and schedules its timers
  in the same step: a request is never stored without its expiry timer, so a redelivered message has nothing
  left to schedule (and must not move timers that are already set).

  KEYS[1] the call's hash                   {tag}:call:<callId>
  KEYS[2] pending set (zset by creation)    {tag}:pending
  KEYS[3] notices set                       {tag}:notices
  KEYS[4] decided set                       {tag}:decided
  KEYS[5] expired set                       {tag}:expired
  KEYS[6] trust counters (hash)             {tag}:trust
  KEYS[7] due timers (zset)                 {tag}:timers

  ARGV[1] JSON object (CreateRequestArgs in approval-store.ts):
    callId           call ID
    attempt          attempt (number)
    requestJson      the request (JSON), stored as given
    status           initial status: pending | notice | decided (decided = refused at once, e.g. no route)
    groups           routed groups, comma-separated
    quorum           quorum (number)
    channels         channels, comma-separated
    now              now (ms)
    expiresAt        expires at (ms)
    requester        requester
    trustField       trust counter field (<requester>|<tool>)
    refusal          only for status "decided": {reason, decidedBy, at (ISO 8601)}
    escalation       only for status "pending", left out for no escalation: {at (ms), groups (comma-separated)}
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms): a request decided here is checked for an unpublished decision
                     this late
    changesChannel   live-update channel: a stored pending request or notice is announced there
                     ({callId, status}) in the same step, so open inboxes hear of it without another round trip
    rule             the routing rule that matched, left out when none did
    why              why it matched, in words for approvers (with rule)

  Timers (members of KEYS[7], score = due time in ms; includes/timer-member):
    expire|<callId>|<attempt>     pending/notice: at the expiry; decided: now + publishCheckMs (the publish
                                  check, removed by mark-published)
    escalate|<callId>|<attempt>   pending with an escalation: at escalation.at

  Returns
    {1, trustCount}   stored; trustCount = consecutive approvals of this tool for this requester so far
    {0, status}       this attempt (or a newer one) is already stored: a redelivered message
]]
--- @include "includes/timer-member"

local args = cjson.decode(ARGV[1])
local callId = args.callId
local current = redis.call('HGET', KEYS[1], 'attempt')
if current and tonumber(current) >= tonumber(args.attempt) then
  return {0, redis.call('HGET', KEYS[1], 'status')}
end
if current then
  -- A re-ask (interrupted, definition changed): the old attempt's state and timers are replaced.
  redis.call('DEL', KEYS[1])
  for i = 2, 5 do redis.call('ZREM', KEYS[i], callId) end
  redis.call('ZREM', KEYS[7], timerMember('expire', callId, current), timerMember('escalate', callId, current))
end

local trust = tonumber(redis.call('HGET', KEYS[6], args.trustField) or '0')
redis.call('HSET', KEYS[1],
  'callId', callId, 'attempt', args.attempt, 'request', args.requestJson, 'status', args.status,
  'groups', args.groups, 'quorum', args.quorum, 'channels', args.channels, 'createdAt', args.now,
  'expiresAt', args.expiresAt, 'requester', args.requester, 'trustCount', trust, 'approvals', 0)
if args.rule then redis.call('HSET', KEYS[1], 'rule', args.rule, 'why', args.why or '') end

local expireTimer = timerMember('expire', callId, args.attempt)
if args.status == 'pending' then
  redis.call('ZADD', KEYS[2], args.now, callId)
  redis.call('ZADD', KEYS[7], args.expiresAt, expireTimer)
  if args.escalation then
    redis.call('HSET', KEYS[1], 'escalationGroups', args.escalation.groups)
    redis.call('ZADD', KEYS[7], args.escalation.at, timerMember('escalate', callId, args.attempt))
  end
  redis.call('PUBLISH', args.changesChannel, cjson.encode({callId = callId, status = args.status}))
elseif args.status == 'notice' then
  redis.call('ZADD', KEYS[3], args.now, callId)
  redis.call('ZADD', KEYS[7], args.expiresAt, expireTimer)
  redis.call('PUBLISH', args.changesChannel, cjson.encode({callId = callId, status = args.status}))
else
  local refusal = args.refusal
  redis.call('HSET', KEYS[1], 'outcomeDecision', 'deny', 'outcomeReason', refusal.reason,
    'outcomeDecidedBy', refusal.decidedBy, 'outcomeAt', refusal.at, 'outcomeApprovers', '')
  redis.call('ZADD', KEYS[4], args.now, callId)
  redis.call('ZADD', KEYS[7], args.now + args.publishCheckMs, expireTimer)
  redis.call('PEXPIRE', KEYS[1], args.retentionMs)
end
return {1, trust}

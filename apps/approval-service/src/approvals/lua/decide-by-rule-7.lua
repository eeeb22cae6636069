--[[
  Stores a request that a standing rule approves (decided "policy"), but only while the rule is stored exactly as the
  caller matched it: a rule revoked (or replaced) since the caller read it decides nothing, so a revoke stops a rule
  on every replica at once. Like create-request, idempotent per attempt, and the decision's publish check is
  scheduled in the same step.

  KEYS[1] the call's hash                   {tag}:call:<callId>
  KEYS[2] pending set                       {tag}:pending
  KEYS[3] notices set                       {tag}:notices
  KEYS[4] decided set                       {tag}:decided
  KEYS[5] expired set                       {tag}:expired
  KEYS[6] due timers (zset)                 {tag}:timers
  KEYS[7] standing rules (hash id → JSON)   {tag}:standing-rules

  ARGV[1] JSON object (DecideByRuleArgs in standing-rule-store.ts):
    callId           call ID
    attempt          attempt (number)
    requestJson      the request (JSON), stored as given
    groups           routed groups, comma-separated (who sees the decision in their history)
    quorum           quorum (number)
    channels         channels, comma-separated
    now              now (ms)
    nowIso           now (ISO 8601)
    requester        requester
    ruleId           the standing rule
    ruleJson         the rule exactly as the caller read and matched it
    reason           the outcome's reason ("standing rule <id> …")
    rule             routing rule that matched
    why              why it matched
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms)
    changesChannel   live-update channel: the decided request is announced there ({callId, status})

  Returns
    {1}            stored, decided by the rule: publish the decision
    {0, status}    this attempt (or a newer one) is already stored: a redelivered message
   {-1}            the rule is gone or changed: route the request to people instead
]]
--- @include "includes/timer-member"

local args = cjson.decode(ARGV[1])
local callId = args.callId
local current = redis.call('HGET', KEYS[1], 'attempt')
if current and tonumber(current) >= tonumber(args.attempt) then
  return {0, redis.call('HGET', KEYS[1], 'status')}
end
if redis.call('HGET', KEYS[7], args.ruleId) ~= args.ruleJson then return {-1} end
if current then
  redis.call('DEL', KEYS[1])
  for i = 2, 5 do redis.call('ZREM', KEYS[i], callId) end
  redis.call('ZREM', KEYS[6], timerMember('expire', callId, current), timerMember('escalate', callId, current))
end

redis.call('HSET', KEYS[1],
  'callId', callId, 'attempt', args.attempt, 'request', args.requestJson, 'status', 'decided',
  'groups', args.groups, 'quorum', args.quorum, 'channels', args.channels, 'createdAt', args.now,
  'expiresAt', args.now, 'requester', args.requester, 'trustCount', 0, 'approvals', 0,
  'rule', args.rule, 'why', args.why, 'standingRule', args.ruleId,
  'outcomeDecision', 'approve', 'outcomeDecidedBy', 'policy', 'outcomeApprovers', '',
  'outcomeReason', args.reason, 'outcomeAt', args.nowIso)
redis.call('ZADD', KEYS[4], args.now, callId)
redis.call('ZADD', KEYS[6], args.now + args.publishCheckMs, timerMember('expire', callId, args.attempt))
redis.call('PEXPIRE', KEYS[1], args.retentionMs)
redis.call('PUBLISH', args.changesChannel, cjson.encode({callId = callId, status = 'decided'}))
return {1}

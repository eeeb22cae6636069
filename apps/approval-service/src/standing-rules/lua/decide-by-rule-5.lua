--[[
  Stores a request that a standing rule approves (decided "policy"), but only while the rule is stored exactly as the
  caller matched it: a rule revoked (or replaced) since the caller read it decides nothing, so a revoke stops a rule
  on every replica at once. Like create-request, idempotent per request ID (a redelivered message finds it stored),
  and the decision's publish check is scheduled in the same step.

  KEYS[1] the request's hash                {tag}:request:<requestId>
  KEYS[2] decided set                       {tag}:decided
  KEYS[3] due timers (zset)                 {tag}:timers
  KEYS[4] standing rules (hash id → JSON)   {tag}:standing-rules (the shard's copy, see standing-rule-store.ts)
  KEYS[5] request IDs of the call ID (set)  {tag}:call-requests:<callId>

  ARGV[1] JSON object (DecideByRuleArgs in standing-rule-store.ts):
    requestId        request ID (the member of the sets and timers)
    callId           call ID
    runId            run ID
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
    changesChannel   live-update channel: the decided request is announced there ({requestId, status})

  KEYS[5] gets the request ID and lives as long as the request can be read (retention), as in create-request.

  Returns
    {1}            stored, decided by the rule: publish the decision
    {0, status}    this request is already stored: a redelivered message
   {-1}            the rule is gone or changed: route the request to people instead
]]
--- @include "@app/requests/timer-member"

local args = cjson.decode(ARGV[1])
local requestId = args.requestId
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGET', KEYS[1], 'status')}
end
if redis.call('HGET', KEYS[4], args.ruleId) ~= args.ruleJson then return {-1} end

redis.call('HSET', KEYS[1],
  'requestId', requestId, 'callId', args.callId, 'runId', args.runId, 'attempt', args.attempt,
  'request', args.requestJson, 'status', 'decided', 'groups', args.groups, 'quorum', args.quorum,
  'channels', args.channels, 'createdAt', args.now, 'expiresAt', args.now, 'requester', args.requester,
  'trustCount', 0, 'approvals', 0, 'rule', args.rule, 'why', args.why, 'standingRule', args.ruleId,
  'outcomeDecision', 'approve', 'outcomeDecidedBy', 'policy', 'outcomeApprovers', '',
  'outcomeReason', args.reason, 'outcomeAt', args.nowIso)
redis.call('ZADD', KEYS[2], args.now, requestId)
redis.call('ZADD', KEYS[3], args.now + args.publishCheckMs, timerMember('expire', requestId, args.attempt))
redis.call('PEXPIRE', KEYS[1], args.retentionMs)
redis.call('SADD', KEYS[5], requestId)
if redis.call('PTTL', KEYS[5]) < tonumber(args.retentionMs) then redis.call('PEXPIRE', KEYS[5], args.retentionMs) end
redis.call('PUBLISH', args.changesChannel, cjson.encode({requestId = requestId, status = 'decided'}))
return {1}

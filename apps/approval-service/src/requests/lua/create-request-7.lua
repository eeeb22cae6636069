--[[
  Stores a new approval request, idempotently, and schedules its timers in the same step: a request is never
  stored without its expiry timer, so a redelivered message has nothing left to schedule (and must not move
  timers that are already set). A request is keyed by its request ID, new for each call the worker parks and
  each time it asks again, so a stored request is only ever this same message delivered again.

  KEYS[1] the request's hash                  {tag}:request:<requestId>
  KEYS[2] pending set (zset by creation)      {tag}:pending
  KEYS[3] notices set                         {tag}:notices
  KEYS[4] decided set                         {tag}:decided
  KEYS[5] expired set                         {tag}:expired
  KEYS[6] due timers (zset)                   {tag}:timers
  KEYS[7] request IDs of the call ID (set)    {tag}:call-requests:<callId>

  ARGV[1] JSON object (CreateRequestArgs in request-store.ts):
    requestId        request ID (the member of the sets and timers)
    callId           call ID
    runId            run ID
    attempt          attempt (number)
    requestJson      the request (JSON), stored as given
    status           initial status: pending | notice | decided (decided = refused at once, e.g. no route)
    groups           routed groups, comma-separated
    quorum           quorum (number)
    channels         channels, comma-separated
    now              now (ms)
    expiresAt        expires at (ms)
    requester        requester
    trustCount       consecutive approvals of this tool for this requester so far (read by the caller from the
                     trust counters, which are not one request's and so live under the home tag)
    refusal          only for status "decided": {reason, decidedBy, at (ISO 8601)}
    escalation       only for status "pending", left out for no escalation: {at (ms), groups (comma-separated)}
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms): a request decided here is checked for an unpublished decision
                     this late
    changesChannel   live-update channel: a stored pending request or notice is announced there, with its call ID
                     and groups (so no replica reads them back)
                     ({requestId, status}) in the same step, so open inboxes hear of it without another round trip
    rule             the routing rule that matched, left out when none did
    why              why it matched, in words for approvers (with rule)

  Timers (members of KEYS[6], score = due time in ms; includes/timer-member):
    expire|<requestId>|<attempt>     pending/notice: at the expiry; decided: now + publishCheckMs (the publish
                                     check, removed by mark-published)
    escalate|<requestId>|<attempt>   pending with an escalation: at escalation.at

  KEYS[7] gets the request ID and lives until the last of its requests can no longer be read (expiry + retention).

  Returns
    {1}               stored
    {0, status}       this request is already stored: a redelivered message
]]
--- @include "includes/timer-member"

local args = cjson.decode(ARGV[1])
local requestId = args.requestId
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGET', KEYS[1], 'status')}
end

redis.call('HSET', KEYS[1],
  'requestId', requestId, 'callId', args.callId, 'runId', args.runId, 'attempt', args.attempt,
  'request', args.requestJson, 'status', args.status, 'groups', args.groups, 'quorum', args.quorum,
  'channels', args.channels, 'createdAt', args.now, 'expiresAt', args.expiresAt, 'requester', args.requester,
  'trustCount', args.trustCount, 'approvals', 0)
if args.rule then redis.call('HSET', KEYS[1], 'rule', args.rule, 'why', args.why or '') end

redis.call('SADD', KEYS[7], requestId)
local readableFor = math.max(tonumber(args.expiresAt) - tonumber(args.now), 0) + tonumber(args.retentionMs)
if redis.call('PTTL', KEYS[7]) < readableFor then redis.call('PEXPIRE', KEYS[7], readableFor) end

local expireTimer = timerMember('expire', requestId, args.attempt)
if args.status == 'pending' then
  redis.call('ZADD', KEYS[2], args.now, requestId)
  redis.call('ZADD', KEYS[6], args.expiresAt, expireTimer)
  if args.escalation then
    redis.call('HSET', KEYS[1], 'escalationGroups', args.escalation.groups)
    redis.call('ZADD', KEYS[6], args.escalation.at, timerMember('escalate', requestId, args.attempt))
  end
  redis.call('PUBLISH', args.changesChannel,
    cjson.encode({requestId = requestId, status = args.status, callId = args.callId, routedTo = args.groups}))
elseif args.status == 'notice' then
  redis.call('ZADD', KEYS[3], args.now, requestId)
  redis.call('ZADD', KEYS[6], args.expiresAt, expireTimer)
  redis.call('PUBLISH', args.changesChannel,
    cjson.encode({requestId = requestId, status = args.status, callId = args.callId, routedTo = args.groups}))
else
  local refusal = args.refusal
  redis.call('HSET', KEYS[1], 'outcomeDecision', 'deny', 'outcomeReason', refusal.reason,
    'outcomeDecidedBy', refusal.decidedBy, 'outcomeAt', refusal.at, 'outcomeApprovers', '')
  redis.call('ZADD', KEYS[4], args.now, requestId)
  redis.call('ZADD', KEYS[6], args.now + args.publishCheckMs, expireTimer)
  redis.call('PEXPIRE', KEYS[1], args.retentionMs)
end
return {1}

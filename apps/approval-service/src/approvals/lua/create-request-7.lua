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

  ARGV[1]  call ID
  ARGV[2]  attempt
  ARGV[3]  the request as JSON
  ARGV[4]  initial status: pending | notice | decided (decided = refused at once, e.g. no route)
  ARGV[5]  routed groups, comma-separated
  ARGV[6]  quorum
  ARGV[7]  channels, comma-separated
  ARGV[8]  now (ms)
  ARGV[9]  expires at (ms)
  ARGV[10] requester
  ARGV[11] trust counter field (<requester>|<tool>)
  ARGV[12] outcome reason, decided-by, decided-at ISO — only for status "decided", as reason\31decidedBy\31at
  ARGV[13] retention of a settled call (ms)
  ARGV[14] escalate at (ms), "" for no escalation (only for status "pending")
  ARGV[15] escalation groups, comma-separated ("" for none)
  ARGV[16] publish check delay (ms): a request decided here is checked for an unpublished decision this late
  ARGV[17] live-update channel: a stored pending request or notice is announced there ({callId, status}) in
           the same step, so open inboxes hear of it without another round trip

  Timers (members of KEYS[7], score = due time in ms):
    expire|<callId>|<attempt>     pending/notice: at the expiry; decided: now + ARGV[16] (the publish check,
                                  removed by mark-published)
    escalate|<callId>|<attempt>   pending with an escalation: at ARGV[14]

  Returns
    {1, trustCount}   stored; trustCount = consecutive approvals of this tool for this requester so far
    {0, status}       this attempt (or a newer one) is already stored: a redelivered message
]]
local current = redis.call('HGET', KEYS[1], 'attempt')
if current and tonumber(current) >= tonumber(ARGV[2]) then
  return {0, redis.call('HGET', KEYS[1], 'status')}
end
if current then
  -- A re-ask (interrupted, definition changed): the old attempt's state and timers are replaced.
  redis.call('DEL', KEYS[1])
  for i = 2, 5 do redis.call('ZREM', KEYS[i], ARGV[1]) end
  redis.call('ZREM', KEYS[7], 'expire|' .. ARGV[1] .. '|' .. current, 'escalate|' .. ARGV[1] .. '|' .. current)
end

local trust = tonumber(redis.call('HGET', KEYS[6], ARGV[11]) or '0')
redis.call('HSET', KEYS[1],
  'callId', ARGV[1], 'attempt', ARGV[2], 'request', ARGV[3], 'status', ARGV[4], 'groups', ARGV[5],
  'quorum', ARGV[6], 'channels', ARGV[7], 'createdAt', ARGV[8], 'expiresAt', ARGV[9],
  'requester', ARGV[10], 'trustCount', trust, 'approvals', 0)

local expireTimer = 'expire|' .. ARGV[1] .. '|' .. ARGV[2]
if ARGV[4] == 'pending' then
  redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
  redis.call('ZADD', KEYS[7], ARGV[9], expireTimer)
  if ARGV[14] ~= '' then
    redis.call('HSET', KEYS[1], 'escalationGroups', ARGV[15])
    redis.call('ZADD', KEYS[7], ARGV[14], 'escalate|' .. ARGV[1] .. '|' .. ARGV[2])
  end
  redis.call('PUBLISH', ARGV[17], cjson.encode({callId = ARGV[1], status = ARGV[4]}))
elseif ARGV[4] == 'notice' then
  redis.call('ZADD', KEYS[3], ARGV[8], ARGV[1])
  redis.call('ZADD', KEYS[7], ARGV[9], expireTimer)
  redis.call('PUBLISH', ARGV[17], cjson.encode({callId = ARGV[1], status = ARGV[4]}))
else
  local sep = string.char(31)
  local a = string.find(ARGV[12], sep, 1, true)
  local b = string.find(ARGV[12], sep, a + 1, true)
  redis.call('HSET', KEYS[1], 'outcomeDecision', 'deny', 'outcomeReason', string.sub(ARGV[12], 1, a - 1),
    'outcomeDecidedBy', string.sub(ARGV[12], a + 1, b - 1), 'outcomeAt', string.sub(ARGV[12], b + 1),
    'outcomeApprovers', '')
  redis.call('ZADD', KEYS[4], ARGV[8], ARGV[1])
  redis.call('ZADD', KEYS[7], tonumber(ARGV[8]) + tonumber(ARGV[16]), expireTimer)
  redis.call('PEXPIRE', KEYS[1], ARGV[13])
end
return {1, trust}

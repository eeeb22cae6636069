--[[
  A person says they did the manual step of a notice: the notice is settled (moved to the decided set, with who did
  it and their note) and, like a decision, waits for its message to the worker to be published: its expiry timer
  becomes the publish check (@app/requests/settle-request), removed by mark-published. Who may mark it done is not
  decided here: the caller asked deciders.ts (mayDecide), and a notice's route never changes (no edits, no
  escalation), so only its status is checked in the same step.

  KEYS[1] the request's hash  {tag}:request:<requestId>
  KEYS[2] notices set         {tag}:notices
  KEYS[3] decided set         {tag}:decided
  KEYS[4] due timers (zset)   {tag}:timers

  ARGV[1] JSON object (CompleteNoticeArgs in vote-store.ts):
    approver         who did it
    note             their note ("" for none)
    now              now (ms)
    nowIso           now (ISO 8601)
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms)
    changesChannel   live-update channel: the change is announced there ({requestId, status})

  Returns
    {1, requestJSON}   done now: tell the worker
    {-1}               NOT_FOUND: no such request
    {-2, doneBy}       already done (by doneBy), or no longer open
   {-11}               NOT_A_NOTICE: the request asks for a decision, not a manual step
]]
--- @include "@app/requests/settle-request"

local args = cjson.decode(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'request', 'requestId', 'doneBy')
local status, attempt, requestJson, requestId, doneBy = f[1], f[2], f[3], f[4], f[5]
if not status then return {-1} end
if status == 'pending' then return {-11} end
if status ~= 'notice' then return {-2, doneBy or status} end

-- outcomeDecidedBy/outcomeApprovers only so that a late vote is told who closed it (record-vote's ALREADY_DECIDED).
redis.call('HSET', KEYS[1], 'status', 'decided', 'doneBy', args.approver, 'doneAt', args.nowIso,
  'doneNote', args.note, 'outcomeDecidedBy', 'person', 'outcomeApprovers', args.approver)
settleRequest({request = KEYS[1], pending = KEYS[2], settled = KEYS[3], timers = KEYS[4]}, requestId, attempt,
  tonumber(args.now), args.retentionMs, args.publishCheckMs)
redis.call('PUBLISH', args.changesChannel, cjson.encode({requestId = requestId, status = 'decided'}))
return {1, requestJson}

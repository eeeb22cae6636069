--[[
  Decides how a call's notifications go out: one by one, or in its requester's digest. The first `after` requests of
  a requester in a window (NOTIFY_DIGEST_WINDOW) are notified one by one; later ones are counted per target (a Slack
  channel, an approver's email) in the window's hash, and each target gets one digest when the window ends. Answers
  once per call attempt and phase: a redelivered request or a retried escalation gets the answer it got first and is
  counted once. A window whose digests have started going out (`closed`) takes no more requests: a late one is
  notified one by one, never counted into a digest already sent.

  KEYS[1] the call's hash                           {tag}:call:<callId>
  KEYS[2] the requester's current window            {tag}:digest:<requester>:<window>

  ARGV[1] JSON:
    attempt   the call attempt being notified
    phase     'request' (it arrived) or 'escalation' (its escalation groups were added)
    window    the current window's start (ms, as a string), as KEYS[2] names it
    after     how many requests of a requester a window notifies one by one
    targets   comma-separated targets of this call: slack:<channel>, email:<approver>
    ttlMs     how long the window's hash is kept (its digests go out when it ends, and are retried a while)

  Returns
    {0}             the call attempt is gone or was replaced: nothing to notify
    {1}             notify one by one
    {2, window}     counted in the digest of `window` (the window this call was first counted in)
]]
local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'attempt') ~= tostring(args.attempt) then return {0} end
local field = 'notify:' .. args.attempt .. ':' .. args.phase
local earlier = redis.call('HGET', KEYS[1], field)
if earlier == 'direct' then return {1} end
if earlier then return {2, earlier} end

local count = redis.call('HINCRBY', KEYS[2], 'n', 1)
if count == 1 then redis.call('PEXPIRE', KEYS[2], args.ttlMs) end
if count <= args.after or redis.call('HEXISTS', KEYS[2], 'closed') == 1 then
  redis.call('HSET', KEYS[1], field, 'direct')
  return {1}
end
for target in string.gmatch(args.targets, '[^,]+') do
  redis.call('HINCRBY', KEYS[2], 't:' .. target, 1)
end
redis.call('HSET', KEYS[1], field, args.window)
return {2, args.window}

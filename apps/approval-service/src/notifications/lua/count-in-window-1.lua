--[[
  Counts a call's notifications into its requester's window (NOTIFY_DIGEST_WINDOW). The first `after` requests of a
  requester in a window are notified one by one; later ones are counted per target (a Slack channel, an approver's
  email) in the window's hash, and each target gets one digest when the window ends. Once per call attempt and phase:
  the answer is kept in the window (`call:<call>`), so asking again gets it and counts nothing. A window whose digests
  have started going out (`closed`) takes no more requests: a late one is notified one by one, never counted into a
  digest already sent.

  KEYS[1] the requester's window                    {home tag}:digest:<requester>:<window>

  ARGV[1] JSON:
    call      <requestId>:<attempt>:<phase>, what is counted once
    window    the window's start (ms, as a string), as KEYS[1] names it
    after     how many requests of a requester a window notifies one by one
    targets   comma-separated targets of this call: slack:<channel>, email:<approver>
    ttlMs     how long the window's hash is kept (its digests go out when it ends, and are retried a while)

  Returns the answer: 'direct' (notify one by one) or the window's start (counted in its digest)
]]
local args = cjson.decode(ARGV[1])
local field = 'call:' .. args.call
local earlier = redis.call('HGET', KEYS[1], field)
if earlier then return earlier end

local count = redis.call('HINCRBY', KEYS[1], 'n', 1)
if count == 1 then redis.call('PEXPIRE', KEYS[1], args.ttlMs) end
local answer = args.window
if count <= args.after or redis.call('HEXISTS', KEYS[1], 'closed') == 1 then
  answer = 'direct'
else
  for target in string.gmatch(args.targets, '[^,]+') do
    redis.call('HINCRBY', KEYS[1], 't:' .. target, 1)
  end
end
redis.call('HSET', KEYS[1], field, answer)
return answer

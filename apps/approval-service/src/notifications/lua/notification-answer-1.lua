--[[
  The answer a call attempt's notifications got (one by one, or in its requester's digest), kept on the call's hash so
  a redelivered request or a retried escalation gets the answer it got first, even in a later window. Reads it, or
  stores the answer count-in-window gave (the first stored answer wins). The window itself is counted by
  count-in-window: it is every request's of one requester, so it lives under the approval state's home tag, while the
  call's hash lives in its shard.

  KEYS[1] the call's hash                           {shard tag}:request:<requestId>

  ARGV[1] the call attempt being notified
  ARGV[2] the answer's field                        notify:<attempt>:<phase>
  ARGV[3] the answer to store ('' = only read): 'direct' or the window's start (ms)

  Returns
    {0}             the call attempt is gone or was replaced: nothing to notify
    {1}             notify one by one
    {2, window}     counted in the digest of `window`
    {3}             no answer yet: ask count-in-window, then store its answer here
]]
if redis.call('HGET', KEYS[1], 'attempt') ~= ARGV[1] then return {0} end
local answer = redis.call('HGET', KEYS[1], ARGV[2])
if not answer then
  if ARGV[3] == '' then return {3} end
  answer = ARGV[3]
  redis.call('HSET', KEYS[1], ARGV[2], answer)
end
if answer == 'direct' then return {1} end
return {2, answer}

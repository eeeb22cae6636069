--[[
  Marks a settled request's decision as published and removes its timers: the expiry timer was the publish
  check (see record-vote, expire-request), so from here on nothing is left to do for this attempt.

  KEYS[1] the request's hash  {tag}:request:<requestId>
  KEYS[2] due timers (zset)   {tag}:timers

  ARGV[1] request ID
  ARGV[2] attempt that was published

  Returns
    {1}   marked
    {0}   the hash is gone or holds another attempt: only this attempt's timers are removed
]]
--- @include "@app/requests/timer-member"

redis.call('ZREM', KEYS[2], timerMember('expire', ARGV[1], ARGV[2]), timerMember('escalate', ARGV[1], ARGV[2]))
if redis.call('HGET', KEYS[1], 'attempt') ~= ARGV[2] then return {0} end
redis.call('HSET', KEYS[1], 'published', '1')
return {1}

--[[
  Records how running a claimed external call went, once.

  KEYS[1] the approval's hash                  {tag}:call:<approvalId>

  ARGV[1] outcome: ok | error
  ARGV[2] summary ("" for none)
  ARGV[3] now (ISO 8601)

  Returns
    {1}                  recorded
    {-1}                 NOT_FOUND: no such approval (or it aged out)
    {-14}                NOT_CLAIMED: nobody claimed it, so nothing may have run
    {-15, outcome}       ALREADY_COMPLETED
]]
local f = redis.call('HMGET', KEYS[1], 'status', 'claimedAt', 'completionOutcome')
if not f[1] then return {-1} end
if not f[2] then return {-14} end
if f[3] then return {-15, f[3]} end
redis.call('HSET', KEYS[1], 'completionOutcome', ARGV[1], 'completionSummary', ARGV[2], 'completedAt', ARGV[3])
return {1}

--[[
  Claims an approved external call for its client, once: whoever claims first may run it, every later claim is
  refused. This is what keeps "exactly once" for code Countersign does not run: a client runs a call only after
  its claim succeeded, and reports the outcome afterwards (complete-call).

  KEYS[1] the approval's hash                  {tag}:call:<approvalId>

  ARGV[1] the claiming principal
  ARGV[2] now (ms)
  ARGV[3] now (ISO 8601)

  Returns
    {1}                claimed now (fields claimedAt, claimedBy)
    {-1}               NOT_FOUND: no such approval (or it aged out)
    {-10}              NOT_DECIDED: still pending, or a manual-step notice
    {-7}               EXPIRED: nobody decided in time (also when the sweep has not yet run)
    {-11, decidedBy}   DENIED: refused by a person or for want of a route
    {-13, claimedAt}   ALREADY_CLAIMED
]]
local f = redis.call('HMGET', KEYS[1], 'status', 'outcomeDecision', 'outcomeDecidedBy', 'expiresAt', 'claimedAt')
local status, decision, decidedBy, expiresAt, claimedAt = f[1], f[2], f[3], f[4], f[5]
if not status then return {-1} end
if status == 'expired' then return {-7} end
if status ~= 'decided' then
  if status == 'pending' and tonumber(expiresAt) <= tonumber(ARGV[2]) then return {-7} end
  return {-10}
end
if decision ~= 'approve' then return {-11, decidedBy or ''} end
if claimedAt then return {-13, claimedAt} end
redis.call('HSET', KEYS[1], 'claimedAt', ARGV[3], 'claimedBy', ARGV[1])
return {1}

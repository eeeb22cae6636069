--[[
  Claims an approved external call for its client, once, on the call ledger: whoever claims first may run it, every
  later claim is refused. This is what keeps "exactly once" for code Countersign does not run: a client runs a call
  only after its claim succeeded, and reports the outcome afterwards (complete-external-call). The ledger's claim is
  the one door into executing (@countersign/call-ledger/call-ledger); what stays here are the approval's own checks:
  is it decided, approved, expired. Whose approval it is (client and requester) the service checked before reading it.

  The call lives in the approval's hash under the prefix "call:" (call:s its state, call:x the claiming client as
  the execution token, call:h, call:r its result); the decision enters the ledger (approved) at the first claim.
  claimedAt is the API's own record of when.

  KEYS[1] the approval's hash                  {tag}:request:<approvalId>

  ARGV[1] the claiming principal (the execution token: only it may complete the call)
  ARGV[2] now (ms)
  ARGV[3] now (ISO 8601)

  Returns
    {1}                claimed now (call:s executing, claimedAt)
    {-1}               NOT_FOUND: no such approval (or it aged out)
    {-10}              NOT_DECIDED: still pending, or a manual-step notice
    {-7}               EXPIRED: nobody decided in time (also when the sweep has not yet run)
    {-11, decidedBy}   DENIED: refused by a person or for want of a route
    {-13, claimedAt}   ALREADY_CLAIMED: the ledger has it executing or done
]]
--- @include "@countersign/call-ledger/call-ledger"

local p = 'call:'
local f = redis.call('HMGET', KEYS[1], 'status', 'outcomeDecision', 'outcomeDecidedBy', 'expiresAt')
local status, decision, decidedBy, expiresAt = f[1], f[2], f[3], f[4]
if not status then return {-1} end
if status == 'expired' then return {-7} end
if status ~= 'decided' then
  if status == 'pending' and tonumber(expiresAt) <= tonumber(ARGV[2]) then return {-7} end
  return {-10}
end
if decision ~= 'approve' then return {-11, decidedBy or ''} end
-- A call claimed by a version before the ledger has claimedAt and no state: it never enters the ledger, so it is
-- never claimed again.
if redis.call('HEXISTS', KEYS[1], 'claimedAt') == 0 then ledgerMove(KEYS[1], p, '', 'approved') end
if not ledgerClaim(KEYS[1], p, ARGV[1]) then return {-13, redis.call('HGET', KEYS[1], 'claimedAt') or ''} end
redis.call('HSET', KEYS[1], 'claimedAt', ARGV[3])
return {1}

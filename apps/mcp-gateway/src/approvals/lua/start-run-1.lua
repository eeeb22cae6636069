--[[
  Takes the run of an approved call for one request of one gateway replica: the record's call moves through the call
  ledger, pending → approved (the approvals API said allow) → executing under the runner's token (the ledger's claim,
  its heartbeat now), so identical calls that arrive together wait for its outcome instead of racing for the claim.
  The approvals API's claim is what guarantees one run; this only keeps the others from asking. A runner whose
  heartbeat is older than `staleAfterMs` (its gateway died before it claimed or settled) is interrupted, and the call
  is asked about again and claimed by this runner: the approvals API's claim then tells whether the dead runner got
  as far as claiming.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId        the record's call ID
    token         the runner's execution token (unique per request)
    staleAfterMs  how long a runner's heartbeat holds before another request may take the run over

  Returns
    {1}            started: the runner may claim and run the call
    {0, state}     not startable now: `executing` (another runner's heartbeat is fresh), `done` or `refused`
    {-1}           the record is gone or started over
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local key = KEYS[1]
if redis.call('HGET', key, 'callId') ~= args.callId then return {-1} end
if ledgerRead(key, '') == 'executing' then
  if ledgerInterrupt(key, '', args.staleAfterMs) ~= 'interrupted' then return {0, (ledgerRead(key, ''))} end
  ledgerMove(key, '', 'interrupted', 'pending')
end
ledgerMove(key, '', 'pending', 'approved')
local claimed, found = ledgerClaim(key, '', args.token)
if not claimed then return {0, found} end
return {1}

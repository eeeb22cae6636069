--[[
  Claims an approved call for execution (approved -> executing), by the processing that owns the run: the call
  ledger's claim (ledgerClaim, libs/call-ledger), the one door into `executing`. The claim carries its own execution
  token: from here on only that token may heartbeat the call and record its result, whoever owns the run by then. The
  first heartbeat is stamped now (Redis TIME, so the clocks of the workers' hosts do not matter).

  KEYS[1] run hash; the call's ledger fields are under the prefix c:<callId>: (state s, execution token x,
          heartbeat h in ms, result r)

  ARGV[1] owner ("<jobId>|<token>|<started>")
  ARGV[2] call ID
  ARGV[3] execution token (fresh for this execution)

  Returns
    1              claimed: the call is executing under this token
   -5              this processing no longer owns the run
   {-6, state}     the call is not approved (someone else moved it)
]]
--- @include "@countersign/call-ledger/call-ledger"

if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return -5 end
local claimed, state = ledgerClaim(KEYS[1], 'c:' .. ARGV[2] .. ':', ARGV[3])
if not claimed then return {-6, state} end
return 1

--[[
  Renews the heartbeat of an executing call, by its executor (ledgerHeartbeat, libs/call-ledger): a fresh heartbeat
  tells a worker that took the run over that the executor is alive, so it waits for the result instead of re-asking.
  Writes nothing unless the call is executing under this token (a finished run's call fields are gone and must stay
  gone).

  KEYS[1] run hash

  ARGV[1] call ID
  ARGV[2] execution token (from start-call)

  Returns
    1   renewed (Redis TIME, ms)
   -7   the call is no longer executing under this token (interrupted and re-asked, or settled)
]]
--- @include "@countersign/call-ledger/call-ledger"

if ledgerHeartbeat(KEYS[1], 'c:' .. ARGV[1] .. ':', ARGV[2]) then return 1 end
return -7

--[[
  The run's owner found a call `executing` (it took the run over from an earlier processing). The call's executor may
  be alive and slow (heartbeat fresh: wait), may have finished meanwhile (done: use its result), or may be dead
  (heartbeat stale or missing: the call is interrupted and asked about again, never re-run on its own). The call
  ledger decides which (ledgerInterrupt, libs/call-ledger, ages by Redis TIME); an interrupted call is asked about
  again in the same step (ledgerMove interrupted -> pending, with the re-ask's body).

  KEYS[1] run hash

  ARGV[1] JSON object (SettleExecutingCallArgs in run-calls.ts):
    owner          "<jobId>|<token>|<started>" of the caller
    callId         the call
    staleAfterMs   staleness window (ms): a heartbeat at least this old means the executor died
    bodyJson       body (JSON) of the re-ask (next attempt, reason interrupted)

  Returns {code, detail}
    {1, ''}        interrupted: pending again with the new body; old decision and execution forgotten
    {2, result}    the executor finished meanwhile: done, with its result JSON
    {0, age}       the executor is alive (heartbeat age in ms): nothing changed, wait for it
   {-5, ''}        this processing no longer owns the run
   {-6, state}     the call is neither executing nor done
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'owner') ~= args.owner then return {-5, ''} end
local c = 'c:' .. args.callId
local found, detail = ledgerInterrupt(KEYS[1], c .. ':', args.staleAfterMs)
if found == 'done' then return {2, detail} end
if found == 'alive' then return {0, detail} end
if found == 'other' then return {-6, detail} end

ledgerMove(KEYS[1], c .. ':', 'interrupted', 'pending')
redis.call('HSET', KEYS[1], c, args.bodyJson)
redis.call('HDEL', KEYS[1], c .. ':d')
return {1, ''}

--[[
  Records the result of an executed call (executing -> done), guarded by the call's execution token, not by run
  ownership (ledgerComplete, libs/call-ledger): a tool that ran is recorded exactly once even when the run was taken
  over while it ran (the new owner waits for this result). Says whether the caller still owns the run, so a caller
  that lost it stops there and leaves the rest of the run to the owner.

  KEYS[1] run hash

  ARGV[1] JSON object (RecordCallResultArgs in run-calls.ts):
    callId           the call
    executionToken   from start-call
    resultJson       result (JSON), stored at c:<callId>:r
    owner            "<jobId>|<token>|<started>" of the caller

  Returns {code, detail}
    {1, ''}      recorded; the caller still owns the run
    {2, ''}      recorded; another processing owns the run now and continues it
   {-7, state}   the call is no longer executing under this token (it was declared interrupted and
                 asked about again): nothing recorded
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local recorded, state = ledgerComplete(KEYS[1], 'c:' .. args.callId .. ':', args.executionToken, args.resultJson)
if not recorded then return {-7, state} end
if redis.call('HGET', KEYS[1], 'owner') == args.owner then return {1, ''} end
return {2, ''}

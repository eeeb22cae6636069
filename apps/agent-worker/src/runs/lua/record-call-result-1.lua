--[[
  Records the result of an executed call (executing -> done), guarded by the call's execution token, not by run
  ownership (ledgerComplete, libs/call-ledger): a tool that ran is recorded exactly once even when the run was taken
  over while it ran (the new owner waits for this result). Says whether the caller still owns the run, so a caller
  that lost it stops there and leaves the rest of the run to the owner. The call's `tool_result` event goes into the
  run's history (and out to its followers) in the same step as the result is recorded: no events script call of its
  own (issue 27).

  KEYS[1] run hash

  ARGV[1] JSON object (RecordCallResultArgs in run-calls.ts):
    callId           the call
    executionToken   from start-call
    resultJson       result (JSON), stored at c:<callId>:r
    owner            "<jobId>|<token>|<started>" of the caller
    eventsChannel    pub/sub channel of run events
    runIdJson        the run ID as a JSON string
    keepEvents       how many events the history keeps
  ARGV[2..] events (encoded) added to the run's history and published when the result is recorded (codes 1 and 2);
            none = none. Arguments of their own, not in ARGV[1]: JSON in a JSON string would be escaped twice.

  Returns {code, detail}
    {1, ''}      recorded (`events` added); the caller still owns the run
    {2, ''}      recorded (`events` added); another processing owns the run now and continues it
   {-7, state}   the call is no longer executing under this token (it was declared interrupted and
                 asked about again): nothing recorded, no event
]]
--- @include "includes/append-events"
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local recorded, state = ledgerComplete(KEYS[1], 'c:' .. args.callId .. ':', args.executionToken, args.resultJson)
if not recorded then return {-7, state} end
if #ARGV > 1 then
  appendEvents(KEYS[1], args.eventsChannel, args.runIdJson, tonumber(args.keepEvents), ARGV, 2)
end
if redis.call('HGET', KEYS[1], 'owner') == args.owner then return {1, ''} end
return {2, ''}

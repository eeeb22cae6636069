--[[
  Compare-and-set of one call's state, by the processing that owns the run (ledgerMove, libs/call-ledger):
  denied -> done, approved -> done (refused now, nothing ran), approved -> pending (definition changed, re-asked).
  `executing` is entered and left only through start-call, record-call-result and settle-executing-call, which carry
  the execution token and heartbeat.

  KEYS[1] run hash

  ARGV[1] JSON object (TransitionCallArgs in run-calls.ts):
    owner        "<jobId>|<token>|<started>" of the caller
    callId       the call
    from         expected current state
    to           new state
    resultJson   result (JSON) to store at c:<callId>:r ("" = leave)
    bodyJson     new body (JSON) for a re-ask ("" = leave); a re-ask also forgets the old decision

  Returns
    1              transitioned
   -5              this processing no longer owns the run
   {-6, state}     the call is not in the expected state (someone else moved it), or either state is `executing`
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'owner') ~= args.owner then return -5 end
local c = 'c:' .. args.callId
local moved, state = ledgerMove(KEYS[1], c .. ':', args.from, args.to, args.resultJson)
if not moved then return {-6, state} end
if args.bodyJson ~= '' then
  redis.call('HSET', KEYS[1], c, args.bodyJson)
  redis.call('HDEL', KEYS[1], c .. ':d')
end
return 1

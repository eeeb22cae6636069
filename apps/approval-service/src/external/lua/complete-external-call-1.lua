--[[
  Records how running a claimed external call went, once, on the call ledger: only the client that claimed it
  completes it (its execution token), executing -> done with the result (@countersign/call-ledger/call-ledger).

  KEYS[1] the approval's hash                  {tag}:request:<approvalId>

  ARGV[1] the completing principal (the claim's execution token)
  ARGV[2] the result (JSON): {outcome: ok | error, summary?, at (ISO 8601)}

  Returns
    {1}                  recorded (call:s done, call:r the result)
    {-1}                 NOT_FOUND: no such approval (or it aged out)
    {-14}                NOT_CLAIMED: nobody claimed it (under this token), so nothing may have run
    {-15, outcome}       ALREADY_COMPLETED
]]
--- @include "@countersign/call-ledger/call-ledger"

local p = 'call:'
if not redis.call('HGET', KEYS[1], 'status') then return {-1} end
local completed, state = ledgerComplete(KEYS[1], p, ARGV[1], ARGV[2])
if completed then return {1} end
if state == 'done' then return {-15, cjson.decode(redis.call('HGET', KEYS[1], p .. 'r')).outcome} end
return {-14}

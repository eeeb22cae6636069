--[[
  Test only: runs one function of the call ledger (libs/call-ledger/src/lua/includes/call-ledger.lua) on a hash, so its
  transitions are checked against a real Redis.

  KEYS[1] the hash
  ARGV[1] JSON: { op, prefix, from?, to?, token?, result?, staleAfterMs? }

  Returns {a, b}: what the function returned, as strings ("1"/"0" for true/false).
]]
--- @include "@countersign/call-ledger/call-ledger"

local a = cjson.decode(ARGV[1])
local k, p = KEYS[1], a.prefix
local x, y
if a.op == 'move' then x, y = ledgerMove(k, p, a.from, a.to, a.result)
elseif a.op == 'claim' then x, y = ledgerClaim(k, p, a.token, a.from)
elseif a.op == 'heartbeat' then x, y = ledgerHeartbeat(k, p, a.token)
elseif a.op == 'complete' then x, y = ledgerComplete(k, p, a.token, a.result, a.to)
elseif a.op == 'interrupt' then x, y = ledgerInterrupt(k, p, a.staleAfterMs)
else return redis.error_reply('unknown op ' .. tostring(a.op)) end
if type(x) == 'boolean' then x = x and '1' or '0' end
return {x, y or ''}

--[[
  Stores a call's outcome, once, through the call ledger. Identical calls get this outcome from now on, for `ttlMs`;
  then an identical call is a new one and asks for approval again.
    with `token`:     the runner that claimed it (start-run-1) ends it: executing → `done` (it ran, or may have) or
                      `refused` (the approval no longer held when it was claimed). Only that token, only once: a run
                      taken over is settled by its new runner, never by its first.
    without `token`:  a decision refused it before it ran: pending → denied → done.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId   the record's call ID
    result   the MCP result as JSON
    ttlMs    how long the outcome is kept
    token    optional: the execution token of the runner that claimed it
    state    with `token`: `done` or `refused`

  Returns
    {1}          settled
    {0, state}   not settled: the record is gone or started over (state ''), already settled (`done`, `refused`), run
                 under another token (`executing`), or not waiting for a decision any more
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local key = KEYS[1]
if redis.call('HGET', key, 'callId') ~= args.callId then return {0, ''} end
local settled, found
if args.token then
  if args.state ~= 'done' and args.state ~= 'refused' then
    return redis.error_reply('settle-call: state must be done or refused, got ' .. tostring(args.state))
  end
  settled, found = ledgerComplete(key, '', args.token, args.result, args.state)
else
  settled, found = ledgerMove(key, '', 'pending', 'denied')
  if settled then settled = ledgerMove(key, '', 'denied', 'done', args.result) end
end
if not settled then return {0, found} end
redis.call('PEXPIRE', key, args.ttlMs)
return {1}

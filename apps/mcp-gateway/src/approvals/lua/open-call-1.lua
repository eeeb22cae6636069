--[[
  Opens the gateway's record of one confirm-tier call (a principal, a tool, a fingerprint): the one an identical
  call made before, or a new one. Identical calls share the record, so they share one approval (`callId` is the
  call ID the approvals API was given) and one outcome. A record still waiting under another definition of the tool
  (its server changed it), or whose approval is gone (`replace` names it), starts over: a new approval is asked for.
  The record's call state is the call ledger's (libs/call-ledger, prefix ""): a new call enters it `pending`.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId          the call ID of a new record (unique)
    runId           the run ID of a new record
    definitionHash  the tool's definition hash now
    ttlMs           a new record's life until its approval is known
    replace         optional: the call ID of a record to start over (its approval is gone)

  Returns
    {1, field, value, ...}   a new record (created, or started over)
    {0, field, value, ...}   the record identical calls opened before
]]
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local key = KEYS[1]
local state = ledgerRead(key, '')
if state ~= '' then
  local current = redis.call('HMGET', key, 'callId', 'definitionHash')
  local stale = state == 'pending'
    and (current[2] ~= args.definitionHash or (args.replace and current[1] == args.replace))
  if not stale then
    local fields = redis.call('HGETALL', key)
    table.insert(fields, 1, 0)
    return fields
  end
end
-- Whatever was there (a record that starts over, or one without a call state) is replaced whole.
redis.call('DEL', key)
redis.call('HSET', key, 'callId', args.callId, 'runId', args.runId, 'definitionHash', args.definitionHash)
ledgerMove(key, '', '', 'pending')
redis.call('PEXPIRE', key, args.ttlMs)
local fields = redis.call('HGETALL', key)
table.insert(fields, 1, 1)
return fields

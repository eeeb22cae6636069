--[[
  Parks a run: replaces its frontier with the given call fields, saves the messages so far and
  releases ownership. Decisions can only arrive after this (requests are published afterwards).

  KEYS[1] run hash

  ARGV[1] JSON object (ParkRunArgs in run-store.ts):
    owner          "<jobId>|<token>|<started>" of the caller
    messagesJson   messages (JSON)
    parkedBy       job ID that parks, '' for the run's own start job (lets a redelivery or retry of that job
                   re-publish the requests: claim-run, apply-decision)
    scriptJson     script (JSON) with the turns played so far blanked ("" = leave the script as it is)
    frontier       the new frontier: field, value, field, value ... of its call fields (c:<callId>...)

  Returns
    1   parked (status awaiting_confirmation)
   -5   this processing no longer owns the run
]]
--- @include "includes/call-fields"

local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'owner') ~= args.owner then return -5 end
redis.call('HDEL', KEYS[1], unpack(withCallFields(KEYS[1], {'owner'})))
if #args.frontier > 0 then redis.call('HSET', KEYS[1], unpack(args.frontier)) end
redis.call('HSET', KEYS[1], 'status', 'awaiting_confirmation', 'messages', args.messagesJson, 'parkedBy', args.parkedBy)
if args.scriptJson ~= '' then redis.call('HSET', KEYS[1], 'script', args.scriptJson) end
return 1

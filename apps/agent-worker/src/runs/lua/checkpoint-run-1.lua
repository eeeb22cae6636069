--[[
  Checkpoints a running run after a turn whose calls all finished (nothing to park): saves the messages so far and
  drops the frontier's call fields (their results are in the messages now, and a worker that takes the run over
  must not settle them and tell the model again). The run stays running and owned by the caller, so a worker that
  takes it over (claim-run, apply-decision) goes on from this turn instead of replaying every turn since the last
  park. Only runbook runs checkpoint (see checkpointsTurns in run-loop.ts).

  KEYS[1] run hash

  ARGV[1] JSON object (CheckpointRunArgs in run-store.ts):
    owner          "<jobId>|<token>|<started>" of the caller
    messagesJson   messages (JSON)

  Returns
    1   checkpointed
   -5   this processing no longer owns the run (nothing is written)
]]
--- @include "includes/call-fields"

local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'owner') ~= args.owner then return -5 end
local calls = withCallFields(KEYS[1], {})
if #calls > 0 then redis.call('HDEL', KEYS[1], unpack(calls)) end
redis.call('HSET', KEYS[1], 'messages', args.messagesJson)
return 1

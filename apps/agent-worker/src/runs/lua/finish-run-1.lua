--[[
  Ends a run (completed or failed), drops its frontier and lets the run expire after a while. The run's last
  events (text, status, done) go into its history in the same step, so a run that reads as finished always has
  its `done` event for a follower (see includes/append-events.lua).

  KEYS[1] run hash

  ARGV[1] JSON object (FinishRunArgs in run-store.ts), with exactly one of owner and jobId:
    owner            "<jobId>|<token>|<started>": end it if this processing owns it
    jobId            end it whichever processing of this job owns it (the job failed for good outside its
                     processor, e.g. it stalled too often)
    status           final status: completed | failed
    messagesJson     messages (JSON) ("" = leave)
    result           result text ("" = none)
    error            error text ("" = none)
    keepForSeconds   how long to keep the finished run
    eventsChannel    pub/sub channel of run events
    runIdJson        the run ID as a JSON string
    keepEvents       how many events the history keeps
    events           the run's last events, encoded (StoredRunEventSchema JSON strings); [] = none

  Returns
    1   finished
    0   the run was already finished
   -1   the run does not exist
   -5   this processing (or job) does not own the run
]]
--- @include "includes/job-owner"
--- @include "includes/call-fields"
--- @include "includes/append-events"

local args = cjson.decode(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local status, owner = unpack(redis.call('HMGET', KEYS[1], 'status', 'owner'))
if status == 'completed' or status == 'failed' then return 0 end
if args.jobId ~= nil then
  if not ownedByJob(owner, args.jobId) then return -5 end
elseif owner ~= args.owner then
  return -5
end

local update = {'status', args.status}
if args.messagesJson ~= '' then update[#update + 1] = 'messages'; update[#update + 1] = args.messagesJson end
if args.result ~= '' then update[#update + 1] = 'result'; update[#update + 1] = args.result end
if args.error ~= '' then update[#update + 1] = 'error'; update[#update + 1] = args.error end
redis.call('HSET', KEYS[1], unpack(update))
-- The frontier's call fields and what only a live run needs go; the header stays until it expires.
redis.call('HDEL', KEYS[1], unpack(withCallFields(KEYS[1], {'owner', 'parkedBy', 'script'})))
redis.call('EXPIRE', KEYS[1], tonumber(args.keepForSeconds))
if #args.events > 0 then
  appendEvents(KEYS[1], args.eventsChannel, args.runIdJson, tonumber(args.keepEvents), args.events, 1)
end
return 1

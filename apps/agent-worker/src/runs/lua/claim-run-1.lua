--[[
  Claims a run for the job that wants to advance it (a `run.start` job). The owner is
  "<jobId>|<token>|<started>": BullMQ gives every processing of a job a fresh lock token, so the same job
  redelivered after its worker died (stalled) takes over, while any other job backs off, and so does an
  earlier processing of the same job that reaches Redis after its redelivery (its lock lapsed meanwhile).

  KEYS[1] run hash (header fields, and the frontier's call fields `c:<callId>...`)

  ARGV[1] job ID
  ARGV[2] lock token of this processing
  ARGV[3] JSON object of header fields to create the run with when it does not exist yet ("" = do not create)
  ARGV[4] the job's attemptsStarted as this processing began (orders the processings of one job)
  ARGV[5..] optional: events added to the run's history (and published) when it is claimed (code 1): channel,
            run ID as JSON, how many events the history keeps, then the encoded events (includes/append-events)

  Returns {code, run}; run is the flat HGETALL reply of the run hash after the claim, so the caller needs
  no second round trip
    {1, run}   claimed: status is now running and this processing owns the run
    {2, run}   this job parked the run earlier (parkedBy '', or its job ID as versions before stored it): the
               caller re-publishes its approval requests (idempotent job IDs)
    {0}        nothing to do (finished, parked by someone else, owned by another live job, or by a later
               processing of this job)
   {-1}        the run does not exist
]]
--- @include "includes/job-owner"
--- @include "includes/append-events"

local function claimed()
  if #ARGV > 7 then appendEvents(KEYS[1], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV, 8) end
  return {1, redis.call('HGETALL', KEYS[1])}
end

local owner = ownerOf(ARGV[1], ARGV[2], ARGV[4])
-- Every run hash has its status from the moment this script creates it, so no status means no run.
local status, current, parkedBy = unpack(redis.call('HMGET', KEYS[1], 'status', 'owner', 'parkedBy'))
if not status then
  if ARGV[3] == '' then return {-1} end
  local fields, flat = cjson.decode(ARGV[3]), {}
  for name, value in pairs(fields) do
    flat[#flat + 1] = name
    flat[#flat + 1] = value
  end
  redis.call('HSET', KEYS[1], unpack(flat))
  status, current, parkedBy = fields.status, fields.owner, fields.parkedBy
end

if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'running', 'owner', owner)
  return claimed()
end
if status == 'running' and (current == owner or supersedes(current, ARGV[1], ARGV[4])) then
  redis.call('HSET', KEYS[1], 'owner', owner)
  return claimed()
end
if status == 'awaiting_confirmation' and (parkedBy == '' or parkedBy == ARGV[1]) then
  return {2, redis.call('HGETALL', KEYS[1])}
end
return {0}

--[[
  Records a verified decision on one parked call (pending -> approved | denied, by the call ledger's ledgerMove,
  libs/call-ledger), and when it was the last undecided call of the frontier, hands the run to this processing
  (status running, owner set) so exactly one worker resumes it. A redelivery of the job that owned the resume
  takes it over; an earlier processing of that job that reaches Redis only after its redelivery (its lock lapsed
  before) does not take it back; a redelivery (or retry) of the job that resumed the run and parked it again
  republishes that park's requests, which the job may have died (or failed) before publishing.

  KEYS[1] run hash; a call's fields are c:<callId> (body JSON), c:<callId>:s (state) and c:<callId>:d
          (decision JSON); a body leaves out `attempt` when it is 0 (see encodeBody in run-state-codec.ts),
          holds the request the call waits for as `rq` and its fingerprint as `fp`

  ARGV[1] JSON object (ApplyDecisionArgs in run-store.ts):
    callId         the call decided
    requestId      the request the decision answers (only the call waiting for it is decided)
    attempt        attempt the decision answers (number)
    fingerprint    fingerprint the decision carries
    decisionJson   the decision (JSON), stored as given
    jobId          job ID of this processing
    lockToken      lock token of this processing
    started        the job's attemptsStarted as this processing began (orders the processings of one job)
    decided        the decision's event (encoded), added to the history and published whenever the decision is
                   recorded (codes 1 and 2), before `events`; '' = none
    eventsChannel  pub/sub channel of run events
    runIdJson      the run ID as a JSON string
    keepEvents     how many events the history keeps
    events         events (encoded, StoredRunEventSchema JSON) added to the run's history and published when this
                   decision completes the frontier (code 2), in the same step as the run becomes running; [] = none

  Returns {code, detail[, run]}; run is the run hash after the change as a flat HGETALL reply (for code 2, its event
  history fields as they were before the change), so the resuming caller needs no second round trip to load the run
    {2, '', run}   recorded, the frontier is complete and this processing owns the resume (`decided` and
                   `events` added)
    {3, '', run}   an earlier processing of this job owned the resume (redelivered; the run is still running
                   under it, whether or not the call is still in the frontier): resume again
    {4, '', run}   this job parked the run again after resuming it (redelivered or retried): nothing is
                   recorded, the caller republishes the requests of the calls waiting (idempotent job IDs)
    {1, ''}        recorded (`decided` added), other calls of the frontier are still undecided
    {0, state}     the call is already decided: duplicate, nothing to do
   {-1, ''}        the run does not exist
   {-2, ''}        the call is not in the run's frontier
   {-3, attempt}   the decision answers another attempt than the one pending
   {-4, body}      fingerprint mismatch; body is the parked call (JSON) for diagnosis
   {-5, ''}        a later processing of this job owns the resume: this one is stale and stops
   {-8, requestId} the call waits for another request (the one returned): a decision of an earlier turn
                   that used the same call ID, or of another run's call, never applies here
]]
--- @include "includes/job-owner"
--- @include "includes/append-events"
--- @include "@countersign/call-ledger/call-ledger"

local args = cjson.decode(ARGV[1])
local c = 'c:' .. args.callId
-- The run's header and the call in one read.
local status, owner, parkedBy, body, state =
  unpack(redis.call('HMGET', KEYS[1], 'status', 'owner', 'parkedBy', c, c .. ':s'))
if not status then return {-1, ''} end
if status == 'awaiting_confirmation' and parkedBy == args.jobId then
  return {4, '', redis.call('HGETALL', KEYS[1])}
end
-- Before the call is checked: a runbook run's checkpoint drops the frontier it resumed from (checkpoint-run), and
-- the job that resumed it still takes it over.
local mine = ownerOf(args.jobId, args.lockToken, args.started)
if status == 'running' and (owner == mine or supersedes(owner, args.jobId, args.started)) then
  redis.call('HSET', KEYS[1], 'owner', mine)
  return {3, '', redis.call('HGETALL', KEYS[1])}
end
-- A later processing of this job owns the run: this one's lock lapsed before it got here. Taking the run back would
-- leave it to a processing that holds no lock: it cannot wait for a call in flight (moving its job to delayed needs
-- the lock), and the redelivery, finding the run taken, would stop.
if status == 'running' and ownedByJob(owner, args.jobId) then return {-5, ''} end
if not body then return {-2, ''} end
if state ~= 'pending' then return {0, state or ''} end

local call = cjson.decode(body)
local attempt = tonumber(call.attempt or 0)
if tonumber(args.attempt) ~= attempt then return {-3, tostring(attempt)} end
if call.rq ~= args.requestId then return {-8, call.rq or ''} end
if args.fingerprint ~= call.fp then return {-4, body} end

local decision = cjson.decode(args.decisionJson)
local next_state = 'denied'
if decision.decision == 'approve' then next_state = 'approved' end
ledgerMove(KEYS[1], c .. ':', 'pending', next_state)
redis.call('HSET', KEYS[1], c .. ':d', args.decisionJson)

local function recorded(more)
  local events = {}
  if args.decided and args.decided ~= '' then events[1] = args.decided end
  for i = 1, #more do events[#events + 1] = more[i] end
  if #events > 0 then
    appendEvents(KEYS[1], args.eventsChannel, args.runIdJson, tonumber(args.keepEvents), events, 1)
  end
end

if status ~= 'awaiting_confirmation' then
  recorded({})
  return {1, ''}
end
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local name = fields[i]
  if string.sub(name, 1, 2) == 'c:' and string.sub(name, -2) == ':s' and fields[i + 1] == 'pending' then
    recorded({})
    return {1, ''}
  end
end
redis.call('HSET', KEYS[1], 'status', 'running', 'owner', mine)
redis.call('HDEL', KEYS[1], 'parkedBy')
-- A follower hears the run is running from the step that made it so (no event script call of its own), right after
-- the decision that did.
recorded(args.events)
-- The run as this step left it, from the read above (no second HGETALL): status and owner as just set, parkedBy gone.
-- Its event history is left as it was read: nothing that resumes a run reads it.
local run = {}
for i = 1, #fields, 2 do
  local name = fields[i]
  if name ~= 'status' and name ~= 'owner' and name ~= 'parkedBy' then
    run[#run + 1] = name
    run[#run + 1] = fields[i + 1]
  end
end
run[#run + 1] = 'status'
run[#run + 1] = 'running'
run[#run + 1] = 'owner'
run[#run + 1] = mine
return {2, '', run}

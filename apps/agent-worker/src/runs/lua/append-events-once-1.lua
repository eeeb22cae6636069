--[[
  Appends events to a run's history and publishes them, in order, in one step, skipping each event that was appended
  before under its marker (a fresh turn's call result, sent as soon as the call finished: a turn re-run after a crash
  sends it only once). A marker is a field of the run hash (`t:<marker>`), so it expires with the run. The events of
  one run and tick travel together, marked or not (RunEvents.flush). See includes/append-events.lua.

  KEYS[1] run hash

  ARGV[1]                 pub/sub channel of run events
  ARGV[2]                 the run ID as a JSON string
  ARGV[3]                 how many events the history keeps
  ARGV[2k+2], ARGV[2k+3]  (k = 1..n) event k's marker field ('' = none: always appended) and the event, encoded
                          (StoredRunEventSchema JSON)

  Returns
    n > 0  the number of the first event appended (the others follow: n + 1, ...)
    0      the run does not exist: nothing stored or published (a key without expiry is never created)
    -1     every event was appended before under its marker: nothing stored or published
]]
--- @include "includes/append-events"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local events = {}
for i = 4, #ARGV, 2 do
  if ARGV[i] == '' or redis.call('HSETNX', KEYS[1], ARGV[i], '1') == 1 then events[#events + 1] = ARGV[i + 1] end
end
if #events == 0 then return -1 end
return appendEvents(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), events, 1)

--[[
  Appends events to a run's bounded history (fields of the run hash, so they expire with the run) and
  publishes them, in one step: see includes/append-events.lua.

  KEYS[1] run hash

  ARGV[1] pub/sub channel of run events
  ARGV[2] the run ID as a JSON string
  ARGV[3] how many events the history keeps
  ARGV[4..] the events, encoded (StoredRunEventSchema JSON)

  Returns
    n > 0  the number of the first event appended (the others follow: n + 1, ...)
    0      the run does not exist: nothing stored or published (a key without expiry is never created)
]]
--- @include "includes/append-events"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return appendEvents(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV, 4)

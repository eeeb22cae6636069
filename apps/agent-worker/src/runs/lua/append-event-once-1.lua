--[[
  Appends one event to a run's history and publishes it, unless an event under the same marker was appended before
  (a fresh turn's call result, sent as soon as the call finished: a turn re-run after a crash sends it only once).
  The marker is a field of the run hash (`t:<marker>`), so it expires with the run. See includes/append-events.lua.

  KEYS[1] run hash

  ARGV[1] pub/sub channel of run events
  ARGV[2] the run ID as a JSON string
  ARGV[3] how many events the history keeps
  ARGV[4] the marker field
  ARGV[5] the event, encoded (StoredRunEventSchema JSON)

  Returns
    n > 0  the number of the event appended
    0      the run does not exist: nothing stored or published (a key without expiry is never created)
    -1     an event under this marker was appended before: nothing stored or published
]]
--- @include "includes/append-events"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[4], '1') == 0 then return -1 end
return appendEvents(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV, 5)

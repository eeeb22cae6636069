--[[
  A person did the manual step of one of the run's calls: the note is kept in the run's `notes` field (a JSON array,
  appended to as text, never decoded here) for the model's next turn, and the run's history gets a text event saying
  so (stored and published in the same step). A note for a request already noted is a redelivery: nothing changes
  (keyed by the notice's request ID, not the call ID: a later turn may reuse a call ID for another manual step).

  KEYS[1] run hash

  ARGV[1] the notice's request ID
  ARGV[2] the note (JSON object {"requestId":…,"callId":…,"text":…})
  ARGV[3] pub/sub channel of run events
  ARGV[4] the run ID as a JSON string
  ARGV[5] how many events the history keeps
  ARGV[6] the text event (encoded, StoredRunEventSchema JSON)

  Returns
    {1, status}   noted; status is the run's (a finished run keeps the note, but has no next turn)
    {2, status}   this request was noted before
    {0}           the run does not exist (finished and expired, or never stored)
]]
--- @include "includes/append-events"
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0} end
local notes = redis.call('HGET', KEYS[1], 'notes')
-- Request IDs hold no quote (and a note's text is JSON-escaped), so another note's text cannot fake the marker.
if notes and string.find(notes, '"requestId":"' .. ARGV[1] .. '"', 1, true) then return {2, status} end
if notes then
  notes = string.sub(notes, 1, -2) .. ',' .. ARGV[2] .. ']'
else
  notes = '[' .. ARGV[2] .. ']'
end
redis.call('HSET', KEYS[1], 'notes', notes)
appendEvents(KEYS[1], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV, 6)
return {1, status}

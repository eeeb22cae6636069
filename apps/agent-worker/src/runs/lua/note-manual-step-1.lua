--[[
  A person did the manual step of one of the run's calls: the note is kept in the run's `notes` field (a JSON array,
  appended to as text, never decoded here) for the model's next turn, and the run's history gets a text event saying
  so (stored and published in the same step). A note for a call already noted is a redelivery: nothing changes.

  KEYS[1] run hash

  ARGV[1] the call ID
  ARGV[2] the note (JSON object {"callId":…,"text":…})
  ARGV[3] pub/sub channel of run events
  ARGV[4] the run ID as a JSON string
  ARGV[5] how many events the history keeps
  ARGV[6] the text event (encoded, StoredRunEventSchema JSON)

  Returns
    {1, status}   noted; status is the run's (a finished run keeps the note, but has no next turn)
    {2, status}   this call was noted before
    {0}           the run does not exist (finished and expired, or never stored)
]]
--- @include "includes/append-events"
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0} end
local notes = redis.call('HGET', KEYS[1], 'notes')
-- Call IDs hold no quote, so the marker cannot be faked by another note's text.
if notes and string.find(notes, '"callId":"' .. ARGV[1] .. '"', 1, true) then return {2, status} end
if notes then
  notes = string.sub(notes, 1, -2) .. ',' .. ARGV[2] .. ']'
else
  notes = '[' .. ARGV[2] .. ']'
end
redis.call('HSET', KEYS[1], 'notes', notes)
appendEvents(KEYS[1], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV, 6)
return {1, status}

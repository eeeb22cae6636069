--[[
  Ends a run (completed or failed), drops its frontier and lets the run expire after a while. The run's last
  events (text, status, done) go into its history in the same step, so a run that reads as finished always has
  its `done` event for a follower (see includes/append-events.lua).

  KEYS[1] run hash

  ARGV[1] owner ("<jobId>|<token>"); "<jobId>|*" to end it whichever processing of that job owns it
          (the job failed for good outside its processor, e.g. it stalled too often)
  ARGV[2] final status: completed | failed
  ARGV[3] messages JSON ("" = leave)
  ARGV[4] result text ("" = none)
  ARGV[5] error text ("" = none)
  ARGV[6] seconds to keep the finished run
  ARGV[7] pub/sub channel of run events
  ARGV[8] the run ID as a JSON string
  ARGV[9] how many events the history keeps
  ARGV[10..] the run's last events, encoded (StoredRunEventSchema JSON)

  Returns
    1   finished
    0   the run was already finished
   -1   the run does not exist
   -5   this processing (or job) does not own the run
]]
--- @include "includes/append-events.lua"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local status, owner = unpack(redis.call('HMGET', KEYS[1], 'status', 'owner'))
if status == 'completed' or status == 'failed' then return 0 end
if string.sub(ARGV[1], -2) == '|*' then
  local job = string.sub(ARGV[1], 1, -2)
  if not owner or string.sub(owner, 1, #job) ~= job then return -5 end
elseif owner ~= ARGV[1] then
  return -5
end

local update = {'status', ARGV[2]}
if ARGV[3] ~= '' then update[#update + 1] = 'messages'; update[#update + 1] = ARGV[3] end
if ARGV[4] ~= '' then update[#update + 1] = 'result'; update[#update + 1] = ARGV[4] end
if ARGV[5] ~= '' then update[#update + 1] = 'error'; update[#update + 1] = ARGV[5] end
redis.call('HSET', KEYS[1], unpack(update))
-- The frontier's call fields and what only a live run needs go; the header stays until it expires.
local drop = {'owner', 'parkedBy', 'script'}
for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(name, 1, 2) == 'c:' then drop[#drop + 1] = name end
end
redis.call('HDEL', KEYS[1], unpack(drop))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[6]))
if #ARGV >= 10 then appendEvents(KEYS[1], ARGV[7], ARGV[8], tonumber(ARGV[9]), ARGV, 10) end
return 1

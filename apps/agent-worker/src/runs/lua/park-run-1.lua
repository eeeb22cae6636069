--[[
  Parks a run: replaces its frontier with the given call fields, saves the messages so far and
  releases ownership. Decisions can only arrive after this (requests are published afterwards).

  KEYS[1] run hash

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] messages JSON
  ARGV[3] job ID that parks (lets a redelivery of it re-publish the requests)
  ARGV[4] script JSON with the turns played so far blanked ("" = leave the script as it is)
  ARGV[5..] field, value, field, value ... of the new frontier (call fields, c:<callId>...)

  Returns
    1   parked (status awaiting_confirmation)
   -5   this processing no longer owns the run
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return -5 end
local old = {'owner'}
for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(name, 1, 2) == 'c:' then old[#old + 1] = name end
end
redis.call('HDEL', KEYS[1], unpack(old))
if #ARGV > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5)) end
redis.call('HSET', KEYS[1], 'status', 'awaiting_confirmation', 'messages', ARGV[2], 'parkedBy', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'script', ARGV[4]) end
return 1

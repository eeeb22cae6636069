--[[
  Parks a run: replaces its frontier with the given call fields, saves the messages so far and
  releases ownership. Decisions can only arrive after this (requests are published afterwards).

  KEYS[1] run meta hash
  KEYS[2] run calls hash

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] messages JSON
  ARGV[3] job ID that parks (lets a redelivery of it re-publish the requests)
  ARGV[4] parked-at time (ms since epoch)
  ARGV[5..] field, value, field, value ... of the new frontier

  Returns
    1   parked (status awaiting_confirmation)
   -5   this processing no longer owns the run
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return -5 end
redis.call('DEL', KEYS[2])
if #ARGV > 4 then redis.call('HSET', KEYS[2], unpack(ARGV, 5)) end
redis.call('HSET', KEYS[1], 'status', 'awaiting_confirmation', 'messages', ARGV[2], 'parkedBy', ARGV[3], 'parkedAt', ARGV[4])
redis.call('HDEL', KEYS[1], 'owner')
return 1

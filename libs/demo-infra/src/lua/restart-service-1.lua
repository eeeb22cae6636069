--[[
  One step of a simulated rolling restart, atomically, returning the service as it is afterwards.

  KEYS[1] services hash (<name>:status, <name>:replicas, <name>:restarts)

  ARGV[1] service name
  ARGV[2] step: 'begin'  counts the restart (it has happened once issued) and shows `restarting`
                'end'    shows `healthy` again
                'whole'  both at once (a restart that takes no time)

  Returns {status, replicas, restarts}, or false when there is no such service (nothing changed)
]]
local name = ARGV[1]
if redis.call('HEXISTS', KEYS[1], name .. ':status') == 0 then return false end
if ARGV[2] ~= 'end' then redis.call('HINCRBY', KEYS[1], name .. ':restarts', 1) end
local status = 'healthy'
if ARGV[2] == 'begin' then status = 'restarting' end
redis.call('HSET', KEYS[1], name .. ':status', status)
return redis.call('HMGET', KEYS[1], name .. ':status', name .. ':replicas', name .. ':restarts')

-- Counts one request against a fixed-window limit and blocks the counter past it: the script of
-- @nest-lab/throttler-storage-redis 1.2 (after wyattjoh's rate-limit-redis), same keys, same answers, run by EVALSHA
-- (LuaScript) so a request sends its SHA1 instead of the script's 877 bytes.
-- KEYS[1] the hits counter, KEYS[2] the block flag (one hash tag).
-- ARGV[1] window in ms, ARGV[2] limit, ARGV[3] block duration in ms (the library's throttler name is left out: the
-- keys carry it).
-- Returns { totalHits, msToExpire, isBlocked (0/1), msToBlockExpire }.
local hitKey = KEYS[1]
local blockKey = KEYS[2]
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local blockDuration = tonumber(ARGV[3])

local totalHits = redis.call('INCR', hitKey)
local timeToExpire = redis.call('PTTL', hitKey)

if timeToExpire <= 0 then
  redis.call('PEXPIRE', hitKey, ttl)
  timeToExpire = ttl
end

local isBlocked = redis.call('GET', blockKey)
local timeToBlockExpire = 0

if isBlocked then
  timeToBlockExpire = redis.call('PTTL', blockKey)
elseif totalHits > limit then
  redis.call('SET', blockKey, 1, 'PX', blockDuration)
  isBlocked = '1'
  timeToBlockExpire = blockDuration
end

if isBlocked and timeToBlockExpire <= 0 then
  redis.call('DEL', blockKey)
  redis.call('SET', hitKey, 1, 'PX', ttl)
  totalHits = 1
  timeToExpire = ttl
  isBlocked = false
end

return { totalHits, timeToExpire, isBlocked and 1 or 0, timeToBlockExpire }

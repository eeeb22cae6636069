--[[
  The run's owner found a call `executing` (it took the run over from an earlier processing). The
  call's executor may be alive and slow (heartbeat fresh: wait), may have finished meanwhile (done:
  use its result), or may be dead (heartbeat stale or missing: the call is interrupted and asked
  about again, never re-run on its own). Ages are measured with Redis TIME.

  KEYS[1] run meta hash
  KEYS[2] run calls hash

  ARGV[1] owner ("<jobId>|<token>")
  ARGV[2] call ID
  ARGV[3] staleness window (ms): a heartbeat at least this old means the executor died
  ARGV[4] body JSON of the re-ask (next attempt, reason interrupted)

  Returns {code, detail}
    {1, ''}        interrupted: pending again with the new body; old decision and execution forgotten
    {2, result}    the executor finished meanwhile: done, with its result JSON
    {0, age}       the executor is alive (heartbeat age in ms): nothing changed, wait for it
   {-5, ''}        this processing no longer owns the run
   {-6, state}     the call is neither executing nor done
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return {-5, ''} end
local state = redis.call('HGET', KEYS[2], ARGV[2] .. ':s')
if state == 'done' then return {2, redis.call('HGET', KEYS[2], ARGV[2] .. ':r') or ''} end
if state ~= 'executing' then return {-6, state or ''} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local beat = tonumber(redis.call('HGET', KEYS[2], ARGV[2] .. ':h') or '')
if beat and now - beat < tonumber(ARGV[3]) then return {0, tostring(now - beat)} end

redis.call('HSET', KEYS[2], ARGV[2] .. ':s', 'pending', ARGV[2], ARGV[4])
redis.call('HDEL', KEYS[2], ARGV[2] .. ':d', ARGV[2] .. ':x', ARGV[2] .. ':h')
return {1, ''}

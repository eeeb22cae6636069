--[[
  The run's owner found a call `executing` (it took the run over from an earlier processing). The
  call's executor may be alive and slow (heartbeat fresh: wait), may have finished meanwhile (done:
  use its result), or may be dead (heartbeat stale or missing: the call is interrupted and asked
  about again, never re-run on its own). Ages are measured with Redis TIME.

  KEYS[1] run hash

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
local c = 'c:' .. ARGV[2]
local owner, state, result, beat = unpack(redis.call('HMGET', KEYS[1], 'owner', c .. ':s', c .. ':r', c .. ':h'))
if owner ~= ARGV[1] then return {-5, ''} end
if state == 'done' then return {2, result or ''} end
if state ~= 'executing' then return {-6, state or ''} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
beat = tonumber(beat or '')
if beat and now - beat < tonumber(ARGV[3]) then return {0, tostring(now - beat)} end

redis.call('HSET', KEYS[1], c .. ':s', 'pending', c, ARGV[4])
redis.call('HDEL', KEYS[1], c .. ':d', c .. ':x', c .. ':h')
return {1, ''}

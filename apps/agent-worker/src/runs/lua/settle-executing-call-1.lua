--[[
  The run's owner found a call `executing` (it took the run over from an earlier processing). The
  call's executor may be alive and slow (heartbeat fresh: wait), may have finished meanwhile (done:
  use its result), or may be dead (heartbeat stale or missing: the call is interrupted and asked
  about again, never re-run on its own). Ages are measured with Redis TIME.

  KEYS[1] run hash

  ARGV[1] JSON object (SettleExecutingCallArgs in run-store.ts):
    owner          "<jobId>|<token>|<started>" of the caller
    callId         the call
    staleAfterMs   staleness window (ms): a heartbeat at least this old means the executor died
    bodyJson       body (JSON) of the re-ask (next attempt, reason interrupted)

  Returns {code, detail}
    {1, ''}        interrupted: pending again with the new body; old decision and execution forgotten
    {2, result}    the executor finished meanwhile: done, with its result JSON
    {0, age}       the executor is alive (heartbeat age in ms): nothing changed, wait for it
   {-5, ''}        this processing no longer owns the run
   {-6, state}     the call is neither executing nor done
]]
--- @include "includes/now-ms"

local args = cjson.decode(ARGV[1])
local c = 'c:' .. args.callId
local owner, state, result, beat = unpack(redis.call('HMGET', KEYS[1], 'owner', c .. ':s', c .. ':r', c .. ':h'))
if owner ~= args.owner then return {-5, ''} end
if state == 'done' then return {2, result or ''} end
if state ~= 'executing' then return {-6, state or ''} end

local now = nowMs()
beat = tonumber(beat or '')
if beat and now - beat < tonumber(args.staleAfterMs) then return {0, tostring(now - beat)} end

redis.call('HSET', KEYS[1], c .. ':s', 'pending', c, args.bodyJson)
redis.call('HDEL', KEYS[1], c .. ':d', c .. ':x', c .. ':h')
return {1, ''}

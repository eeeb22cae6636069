--[[
  Takes the run of an approved call for one request of one gateway replica, so identical calls that arrive together
  wait for its outcome instead of racing for the claim. The approvals API's claim is what guarantees one run; this
  only keeps the others from asking. A runner whose lease passed (its gateway died before it claimed or settled) is
  taken over: the claim then tells whether it got as far as claiming.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId   the record's call ID
    runner   who runs it (unique per request)
    leaseMs  how long the run may take before another request may take it over

  Returns
    {1}                  started: the runner may claim and run the call
    {0, state}           not startable now: `running` (another runner's lease is live), `done` or `refused`
    {-1}                 the record is gone or started over
]]
local args = cjson.decode(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'callId', 'state', 'leaseUntil')
if f[1] ~= args.callId then return {-1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if f[2] == 'running' and f[3] and tonumber(f[3]) > now then return {0, 'running'} end
if f[2] == 'done' or f[2] == 'refused' then return {0, f[2]} end
redis.call('HSET', KEYS[1], 'state', 'running', 'runner', args.runner, 'leaseUntil', now + args.leaseMs)
return {1}

--[[
  Stores a call's outcome, once: the result of its one run (`done`), or why it will not run (`refused`). Identical
  calls get this outcome from now on, for `ttlMs`; then an identical call is a new one and asks for approval again.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId   the record's call ID
    state    `done` or `refused`
    result   the MCP result as JSON
    ttlMs    how long the outcome is kept
    runner   optional: the runner that settles (a run taken over must not be settled by its first runner)

  Returns
    1   settled
    0   not settled: the record is gone, started over, already settled, or run by another runner
]]
local args = cjson.decode(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'callId', 'state', 'runner')
if f[1] ~= args.callId then return 0 end
if f[2] == 'done' or f[2] == 'refused' then return 0 end
if args.runner and f[3] ~= args.runner then return 0 end
redis.call('HSET', KEYS[1], 'state', args.state, 'result', args.result)
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], args.ttlMs)
return 1

--[[
  Counts a decided request into its requester's trust in the tool: consecutive approvals of the tool's calls as asked.
  An approve of the arguments as asked adds one; anything else (a deny, an approve of edited arguments) starts over.
  The counters are every requester's, so they live under the approval state's home tag and are counted after the
  request's own script decided it (in its shard). Updates are applied in the order of the decisions, not of their
  arrival: one older than the last applied for this counter is dropped, so a deny that lands before an earlier
  approve's update is not undone by it.

  KEYS[1] trust counters (hash)   {home tag}:trust   fields <requester>|<tool> (the count), <requester>|<tool>|at

  ARGV[1] the counter's field     <requester>|<tool>
  ARGV[2] 'approve' (add one) or 'reset'
  ARGV[3] when the request was decided (ms)

  Returns 1 when applied, 0 when dropped as older than the last update.
]]
local at = tonumber(ARGV[3])
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '|at') or '-1')
if at < last then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] .. '|at', ARGV[3])
if ARGV[2] == 'approve' then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
else
  redis.call('HSET', KEYS[1], ARGV[1], 0)
end
return 1

--[[
  Escalation: adds groups to a still-pending request, so their members may decide too.

  KEYS[1] the call's hash     {tag}:call:<callId>

  ARGV[1] attempt the timer was set for
  ARGV[2] groups to add, comma-separated

  Returns
    {1}   escalated now (the new groups must be notified)
    {2}   already escalated by an earlier run of this timer (notify again: notifications are
          deduplicated by job ID; but the escalation is not new, so it is not audited again)
    {0}   nothing to do: missing, superseded or no longer pending
]]
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then return {0} end
if redis.call('HGET', KEYS[1], 'attempt') ~= ARGV[1] then return {0} end
local groups = redis.call('HGET', KEYS[1], 'groups')
local present = ',' .. groups .. ','
local added = false
for group in string.gmatch(ARGV[2], '[^,]+') do
  if not string.find(present, ',' .. group .. ',', 1, true) then
    groups = groups .. ',' .. group
    present = present .. group .. ','
    added = true
  end
end
if not added then return {2} end
redis.call('HSET', KEYS[1], 'groups', groups)
return {1}

--[[
  Escalation: adds the request's escalation groups (stored with its route: when it was created, or when an edit
  routed it anew) to a still-pending request, so their members may decide too. Adding them is a change of the route:
  the route version goes up, so a vote checked against the route before (record-vote's checkedRoute) is refused.

  KEYS[1] the request's hash  {tag}:request:<requestId>

  ARGV[1] attempt the timer was set for

  Returns
    {1, groups}   escalated now (the groups, comma-separated, must be notified)
    {2, groups}   already escalated by an earlier run of this timer (notify again: notifications are
                  deduplicated by job ID; but the escalation is not new, so it is not audited again)
    {0}           nothing to do: missing, superseded, no longer pending, or no escalation
]]
--- @include "includes/comma-list"

local f = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'groups', 'escalationGroups')
if f[1] ~= 'pending' or f[2] ~= ARGV[1] or not f[4] or f[4] == '' then return {0} end
local groups = f[3]
local added = false
for group in string.gmatch(f[4], '[^,]+') do
  if not inCommaList(groups, group) then
    groups = groups .. ',' .. group
    added = true
  end
end
if not added then return {2, f[4]} end
redis.call('HSET', KEYS[1], 'groups', groups)
redis.call('HINCRBY', KEYS[1], 'routeVersion', 1)
return {1, f[4]}

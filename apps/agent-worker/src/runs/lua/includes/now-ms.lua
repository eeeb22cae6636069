--[[
  Redis TIME in milliseconds: every worker measures heartbeats with the server's clock, so the clocks of the
  workers' hosts do not matter.
]]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

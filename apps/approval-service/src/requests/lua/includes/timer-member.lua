--[[
  The due-timer set's member of one timer: "<kind>|<requestId>|<attempt>", kind expire or escalate (timerMember in
  timers/timer-member.ts builds the same; IDs never contain '|').
]]
local function timerMember(kind, requestId, attempt)
  return kind .. '|' .. requestId .. '|' .. attempt
end

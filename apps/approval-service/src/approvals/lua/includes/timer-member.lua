--[[
  The due-timer set's member of one timer: "<kind>|<callId>|<attempt>", kind expire or escalate (timerMember in
  approval-keys.ts builds the same; call IDs never contain '|').
]]
local function timerMember(kind, callId, attempt)
  return kind .. '|' .. callId .. '|' .. attempt
end

--[[
  Groups are kept in the request's hash as comma-separated lists (IDs never contain a comma).
]]
local function inCommaList(list, item)
  return string.find(',' .. list .. ',', ',' .. item .. ',', 1, true) ~= nil
end

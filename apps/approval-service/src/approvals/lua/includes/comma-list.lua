--[[
  Groups are kept in the request's hash as comma-separated lists (IDs never contain a comma).
]]
local function inCommaList(list, item)
  return string.find(',' .. list .. ',', ',' .. item .. ',', 1, true) ~= nil
end

-- Whether two comma-separated lists share an item (an approver's groups and a request's routed groups).
local function sharesCommaListItem(list, items)
  for item in string.gmatch(items, '[^,]+') do
    if inCommaList(list, item) then return true end
  end
  return false
end

--[[
  The fields of the run's calls all start with "c:" (c:<callId> body, then :s state, :d decision, :r result,
  :x execution token, :h heartbeat; see run-keys.ts), which keeps them apart from the header fields.
  Appends the names of all of them to `names` and returns it.
]]
local function withCallFields(runKey, names)
  for _, name in ipairs(redis.call('HKEYS', runKey)) do
    if string.sub(name, 1, 2) == 'c:' then names[#names + 1] = name end
  end
  return names
end

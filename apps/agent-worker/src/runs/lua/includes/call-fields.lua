--[[
  The fields of the run's calls all start with "c:" (c:<callId> body, then :s state, :d decision, :r result,
  :x execution token, :h heartbeat; see run-keys.ts), which keeps them apart from the header fields. The markers of
  results sent during a fresh turn start with "t:" (runEventFields.sentOnce): they keep a turn that is run again after
  a crash from sending a result twice, and every caller here (park, checkpoint, end) makes the turn durable, so
  they go with the call fields and a run at rest carries none.
  Appends the names of all of them to `names` and returns it.
]]
local function withCallFields(runKey, names)
  for _, name in ipairs(redis.call('HKEYS', runKey)) do
    local prefix = string.sub(name, 1, 2)
    if prefix == 'c:' or prefix == 't:' then names[#names + 1] = name end
  end
  return names
end

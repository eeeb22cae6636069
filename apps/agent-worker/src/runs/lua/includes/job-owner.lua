--[[
  A run's owner is "<jobId>|<lock token>" (ownerOf in run-state.ts): BullMQ gives every processing of a job a
  fresh lock token, so an owner that starts with "<jobId>|" is some processing of that job, possibly an
  earlier one that died (the job was redelivered).
]]
local function ownerOf(jobId, lockToken)
  return jobId .. '|' .. lockToken
end

-- `owner` as HMGET gives it: false when the run has none.
local function ownedByJob(owner, jobId)
  return owner ~= false and owner ~= nil and string.sub(owner, 1, #jobId + 1) == jobId .. '|'
end

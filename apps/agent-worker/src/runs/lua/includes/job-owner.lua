--[[
  A run's owner is "<jobId>|<lock token>|<started>" (ownerOf in run-state-codec.ts): BullMQ gives every processing
  of a job a fresh lock token, so an owner that starts with "<jobId>|" is some processing of that job, possibly an
  earlier one that died (the job was redelivered). <started> is the job's attemptsStarted as that processing began
  (BullMQ counts it up each time the job becomes active): it orders the processings of one job, so a stale one
  whose lock lapsed before it reached Redis cannot take the run back from the redelivery that replaced it.
]]
local function ownerOf(jobId, lockToken, started)
  return jobId .. '|' .. lockToken .. '|' .. started
end

-- `owner` as HMGET gives it: false when the run has none.
local function ownedByJob(owner, jobId)
  return owner ~= false and owner ~= nil and string.sub(owner, 1, #jobId + 1) == jobId .. '|'
end

-- Whether a processing of `jobId` that started as number `started` comes after the one that owns the run (a
-- processing of the same job). An owner written before the count was kept ("<jobId>|<token>") reads as 0.
local function supersedes(owner, jobId, started)
  if not ownedByJob(owner, jobId) then return false end
  local ownerStarted = tonumber(string.match(string.sub(owner, #jobId + 2), '|(%d+)$')) or 0
  return tonumber(started) > ownerStarted
end

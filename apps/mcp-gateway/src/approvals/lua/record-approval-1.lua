--[[
  Records the approval a call's record waits for, and keeps the record as long as that approval can be decided and
  its outcome is to be replayed.

  KEYS[1] the call's record                    {tag}:call:<sha256 of principal and fingerprint>

  ARGV[1] JSON:
    callId      the record's call ID (another one means the record started over meanwhile)
    approvalId  the approvals API's ID
    expiresAt   when the approval expires (ISO 8601)
    inboxUrl    where approvers decide it
    ttlMs       the record's life from now

  Returns
    1   recorded
    0   the record is gone or started over: nothing written
]]
local args = cjson.decode(ARGV[1])
if redis.call('HGET', KEYS[1], 'callId') ~= args.callId then return 0 end
redis.call('HSET', KEYS[1], 'approvalId', args.approvalId, 'expiresAt', args.expiresAt, 'inboxUrl', args.inboxUrl)
redis.call('PEXPIRE', KEYS[1], args.ttlMs)
return 1

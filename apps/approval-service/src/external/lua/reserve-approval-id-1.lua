--[[
  Finds the approval of one external call (client, requester, run, call ID, fingerprint), or reserves a new approval
  ID for it, in one step: two submissions of the same call at once get the same ID, and only one of them stores the
  request (create-request is idempotent). A reservation whose request was never stored (the process died in
  between) is simply used by the next submission of the same call.

  KEYS[1] the call's index entry               {tag}:external:<sha256 of client, requester, run, call ID, fingerprint>

  ARGV[1] a new approval ID, used if none is stored yet
  ARGV[2] how long the entry lives (ms): as long as the request it names can be read, and a little more

  Returns
    {1, approvalId}   reserved now (ARGV[1])
    {0, approvalId}   stored by an earlier submission of the same call
]]
local existing = redis.call('GET', KEYS[1])
if existing then return {0, existing} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, ARGV[1]}

--[[
  Reserves the digest of one target (a Slack channel, an approver's email) of a requester's window before it is sent,
  so a retried job never sends it twice (as claim-delivery does for a call's posts and emails). Closes the window
  first: a request of the requester that comes later is notified one by one (count-in-window), never counted into
  a digest already on its way.

  KEYS[1] the requester's window                    {home tag}:digest:<requester>:<window>

  ARGV[1] the target                                slack:<channel> | email:<approver>
  ARGV[2] the reservation to store                  reserved:<ms>:<nonce>

  Returns
    {1, count}   reserved: send a digest of `count` requests, then record-digest or release-digest
    {2, held}    reserved or sent before (held = "reserved:<ms>:<nonce>" or "delivered:<receipt>")
    {0}          nothing to send: the window is gone (kept for its TTL) or counted no request for this target
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
redis.call('HSET', KEYS[1], 'closed', '1')
local field = 'delivery:' .. ARGV[1]
local held = redis.call('HGET', KEYS[1], field)
if held then return {2, held} end
local count = tonumber(redis.call('HGET', KEYS[1], 't:' .. ARGV[1]) or '0')
if count < 1 then return {0} end
redis.call('HSET', KEYS[1], field, ARGV[2])
return {1, count}

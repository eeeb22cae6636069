--[[
  Reserves the digest of one target (a Slack channel, an approver's email) of a requester's window before it is sent,
  so a retried job never sends it twice (includes/reservation, as claim-delivery does for a call's posts and emails;
  record-delivery and release-delivery finish it). Closes the window first: a request of the requester that comes
  later is notified one by one (count-in-window), never counted into a digest already on its way.

  KEYS[1] the requester's window                    {home tag}:digest:<requester>:<window>

  ARGV[1] the target                                slack:<channel> | email:<approver>
  ARGV[2] the reservation to store                  reserved:<ms>:<nonce>

  The digest's field in the window is delivery:<target>.

  Returns
    {1, count}   reserved: send a digest of `count` requests, then record-delivery or release-delivery
    {2, held}    reserved or sent before (held = "reserved:<ms>:<nonce>" or "delivered:<receipt>")
    {0}          nothing to send: the window is gone (kept for its TTL) or counted no request for this target
]]
--- @include "includes/reservation"

if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
redis.call('HSET', KEYS[1], 'closed', '1')
local field = 'delivery:' .. ARGV[1]
local held = heldDelivery(KEYS[1], field)
if held then return {2, held} end
local count = tonumber(redis.call('HGET', KEYS[1], 't:' .. ARGV[1]) or '0')
if count < 1 then return {0} end
reserveDelivery(KEYS[1], field, ARGV[2])
return {1, count}

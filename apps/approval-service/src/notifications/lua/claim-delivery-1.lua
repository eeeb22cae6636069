--[[
  Reserves one delivery of a request (a Slack post, an email) before it is made, so a retried job never
  makes it twice (includes/reservation). The reservation stays until record-delivery replaces it with the delivery's
  receipt or release-delivery removes it (the delivery certainly did not happen).

  KEYS[1] the request's hash                         {tag}:request:<requestId>

  ARGV[1] attempt the delivery is for
  ARGV[2] the delivery's field                       delivery:<kind>:<target>
  ARGV[3] the reservation to store                   reserved:<ms>:<nonce>
  ARGV[4] statuses in which a new delivery may be made, comma-separated ("pending,notice", "expired")

  Returns
    {1}          reserved: deliver, then record-delivery or release-delivery
    {2, held}    reserved or delivered before (held = the field: "reserved:<ms>:<nonce>" or "delivered:<receipt>"),
                 whatever the status is now
    {0}          nothing reserved: the hash is gone or holds another attempt, or the request is in none of the
                 statuses
]]
--- @include "includes/reservation"

if redis.call('HGET', KEYS[1], 'attempt') ~= ARGV[1] then return {0} end
local held = heldDelivery(KEYS[1], ARGV[2])
if held then return {2, held} end
local status = redis.call('HGET', KEYS[1], 'status') or ''
if not string.find(',' .. ARGV[4] .. ',', ',' .. status .. ',', 1, true) then return {0} end
reserveDelivery(KEYS[1], ARGV[2], ARGV[3])
return {1}

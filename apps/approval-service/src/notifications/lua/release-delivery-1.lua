--[[
  Releases a delivery reserved by claim-delivery or claim-digest that certainly did not happen (the channel answered
  with a refusal), so a retry may make it. Only while the field still holds this reservation: a late release never
  removes a newer attempt's reservation or record (includes/reservation).

  KEYS[1] the hash the delivery was reserved in      {tag}:request:<requestId> or {home tag}:digest:<requester>:<window>

  ARGV[1] the delivery's field                       delivery:<kind>:<target>
  ARGV[2] the reservation it was claimed with

  Returns
    1   released
    0   the field no longer holds the reservation: nothing removed
]]
--- @include "includes/reservation"

if releaseDelivery(KEYS[1], ARGV[1], ARGV[2]) then return 1 end
return 0

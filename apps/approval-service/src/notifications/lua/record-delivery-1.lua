--[[
  Records a delivery reserved by claim-delivery or claim-digest, together with what later steps need from it (the Slack
  message an outcome update edits, the approver an expiry is emailed to), in one step: a retry finds either the
  reservation or all of the record. Only while the field still holds this reservation, so a late record never
  writes into a newer attempt's state (includes/reservation).

  KEYS[1] the hash the delivery was reserved in      {tag}:request:<requestId> or {home tag}:digest:<requester>:<window>

  ARGV[1] the delivery's field                       delivery:<kind>:<target>
  ARGV[2] the reservation it was claimed with
  ARGV[3] the record                                 delivered:<receipt>
  ARGV[4..] field, value pairs to set with it        e.g. slack:<channel ID> <ts>, emailed:<approver> 1

  Returns
    1   recorded
    0   the field no longer holds the reservation (the hash is gone or was replaced by a newer attempt): nothing
        written
]]
--- @include "includes/reservation"

local also = {}
for i = 4, #ARGV do also[#also + 1] = ARGV[i] end
if recordDelivery(KEYS[1], ARGV[1], ARGV[2], ARGV[3], also) then return 1 end
return 0

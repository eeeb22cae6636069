--[[
  Reserve, deliver, record: each delivery (a Slack post or an email of a request, a digest of a requester's window) is
  one field of a hash, holding its reservation while a try makes it and its record once made, so a retried job never
  makes it twice. A field found still holding a reservation means an earlier try stopped in between (its process died,
  or it lost the answer): whether the delivery happened is unknown, and the caller must not simply make it again (see
  once-only-delivery.ts). Used by claim-delivery and claim-digest (each with its own check of what is due), and by
  record-delivery and release-delivery, which serve both.

  A field's value:  reserved:<ms>:<nonce>   a try is making the delivery
                    delivered:<receipt>     made; the receipt is given back to a retry
]]

-- What an earlier try left in the field (its reservation or its record), or false when nothing.
local function heldDelivery(key, field)
  return redis.call('HGET', key, field)
end

local function reserveDelivery(key, field, reservation)
  redis.call('HSET', key, field, reservation)
end

-- Replaces the reservation with the record, and sets `also` (field, value, …) in the same step; false, writing
-- nothing, when the field no longer holds this reservation (the hash is gone or holds a newer attempt).
local function recordDelivery(key, field, reservation, record, also)
  if redis.call('HGET', key, field) ~= reservation then return false end
  redis.call('HSET', key, field, record, unpack(also))
  return true
end

-- Removes the reservation of a delivery that certainly did not happen; false when the field no longer holds it.
local function releaseDelivery(key, field, reservation)
  if redis.call('HGET', key, field) ~= reservation then return false end
  redis.call('HDEL', key, field)
  return true
end

--[[
  Releases a delivery reserved by claim-delivery that certainly did not happen (the channel answered with a
  refusal), so a retry may make it. Only while the field still holds this reservation: a late release never
  removes a newer attempt's reservation or record.

  KEYS[1] the request's hash                         {tag}:request:<requestId>

  ARGV[1] the delivery's field                       delivery:<kind>:<target>
  ARGV[2] the reservation it was claimed with

  Returns
    1   released
    0   the field no longer holds the reservation: nothing removed
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1

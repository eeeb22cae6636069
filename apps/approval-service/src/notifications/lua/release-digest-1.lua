--[[
  Releases a digest reserved by claim-digest that certainly was not sent (the channel refused it), so a retry may
  send it. Only while the field still holds this reservation.

  KEYS[1] the requester's window                    {home tag}:digest:<requester>:<window>

  ARGV[1] the target                                slack:<channel> | email:<approver>
  ARGV[2] the reservation it was claimed with

  Returns
    1   released
    0   the field no longer holds the reservation: nothing removed
]]
local field = 'delivery:' .. ARGV[1]
if redis.call('HGET', KEYS[1], field) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], field)
return 1

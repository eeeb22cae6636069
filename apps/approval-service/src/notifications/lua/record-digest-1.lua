--[[
  Records a digest reserved by claim-digest as sent. Only while the field still holds this reservation.

  KEYS[1] the requester's window                    {home tag}:digest:<requester>:<window>

  ARGV[1] the target                                slack:<channel> | email:<approver>
  ARGV[2] the reservation it was claimed with
  ARGV[3] the record                                delivered:<receipt>

  Returns
    1   recorded
    0   the field no longer holds the reservation (the window expired): nothing written
]]
local field = 'delivery:' .. ARGV[1]
if redis.call('HGET', KEYS[1], field) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], field, ARGV[3])
return 1

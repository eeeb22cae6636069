--[[
  Records a delivery reserved by claim-delivery, together with what later steps need from it (the Slack message
  an outcome update edits, the approver an expiry is emailed to), in one step: a retry finds either the
  reservation or all of the record. Only while the field still holds this reservation, so a late record never
  writes into a newer attempt's state.

  KEYS[1] the request's hash                         {tag}:request:<requestId>

  ARGV[1] the delivery's field                       delivery:<kind>:<target>
  ARGV[2] the reservation it was claimed with
  ARGV[3] the record                                 delivered:<receipt>
  ARGV[4..] field, value pairs to set with it        e.g. slack:<channel ID> <ts>, emailed:<approver> 1

  Returns
    1   recorded
    0   the field no longer holds the reservation (the hash is gone or was replaced by a newer attempt): nothing
        written
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3], unpack(ARGV, 4))
return 1

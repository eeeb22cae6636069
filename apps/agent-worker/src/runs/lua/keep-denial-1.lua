--[[
  Keeps a person's denial of a call with its run (sticky denials, scope `run`): a field of the run hash named by the
  call's fingerprint, so it expires with the run and a repeat of the call in this run is refused without asking.

  KEYS[1] run hash

  ARGV[1] the field (stickyDenialField in run-keys.ts)
  ARGV[2] the denial (KeptDenial JSON)

  Returns
    1   kept
    0   the run does not exist: nothing written (a key without expiry is never created)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1

--[[
  Appends a batch of entries to the hash-chained audit stream, if the chain head is still the one the
  caller computed the entries' hashes from (compare-and-set; on a miss the caller re-chains and retries).

  KEYS[1] audit stream
  KEYS[2] chain head (hash of the newest entry)

  ARGV[1]            the head the caller expects ("" for an empty chain)
  ARGV[2k], ARGV[2k+1]  (k = 1..n) entry k's hash and its JSON (without prevHash/hash);
                        entry k links to entry k-1, entry 1 to ARGV[1]

  Returns
    {1, id1, ..., idn}   appended, with the stream IDs in order
    {0, head}            the head moved; re-chain from this head and retry
]]
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then
  return {0, head}
end
local result = {1}
local prev = ARGV[1]
for i = 2, #ARGV, 2 do
  result[#result + 1] = redis.call('XADD', KEYS[1], '*', 'entry', ARGV[i + 1], 'prev', prev, 'hash', ARGV[i])
  prev = ARGV[i]
end
redis.call('SET', KEYS[2], prev)
return result

--[[
  Appends a batch of entries of one writer's chain to the shared audit stream and moves that chain's head.
  Only the writer that owns the chain extends it, so the head check is a guard, not a race: it fails only
  when two processes share a chain ID, or Redis lost the writer's last batch (then the caller starts a
  new chain rather than fork this one).

  KEYS[1] audit stream (entries of every chain, in append order)
  KEYS[2] heads hash (field = chain ID, value = hash of that chain's newest entry)

  ARGV[1]               chain ID
  ARGV[2]               the head the writer expects ("" for a new chain)
  ARGV[2k+1], ARGV[2k+2]  (k = 1..n) entry k's hash and its JSON; entry k links to entry k-1 of the chain,
                          entry 1 to ARGV[2]

  Returns
    {id1, ..., idn}   appended, the stream IDs in order
    -1                the chain's head is not ARGV[2]; nothing written
]]
local chain = ARGV[1]
local head = redis.call('HGET', KEYS[2], chain) or ''
if head ~= ARGV[2] then
  return -1
end
local ids = {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', 'chain', chain, 'entry', ARGV[i + 1], 'hash', ARGV[i])
end
redis.call('HSET', KEYS[2], chain, ARGV[#ARGV - 1])
return ids

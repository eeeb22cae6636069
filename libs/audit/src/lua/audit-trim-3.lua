--[[
  Retention: trims the audit stream up to a new checkpoint, and removes the heads of the chains it trimmed whole.
  The caller read and verified what is trimmed and signed the checkpoint (the key never reaches Redis); this script
  applies it only if nothing moved since that read, so replicas trimming at once never trim twice or lose a chain.

  KEYS[1] audit stream
  KEYS[2] heads hash (field = chain ID, value = the link of that chain's newest entry)
  KEYS[3] checkpoint (a string: the signed checkpoint JSON)

  ARGV[1] JSON:
    expected    the checkpoint as the caller read it ("" when there was none)
    checkpoint  the new checkpoint
    minId       the first stream ID to keep: everything before it is trimmed
    prune       [{ chain, head }]: chains trimmed whole, each with the head the caller read

  Returns
    n    entries trimmed (0 when only the checkpoint was signed again)
    -1   the checkpoint is not `expected` (another replica trimmed meanwhile); nothing changed
    -2   a chain to prune has a head other than the one given (it was extended); nothing changed
]]
local args = cjson.decode(ARGV[1])
if (redis.call('GET', KEYS[3]) or '') ~= args.expected then
  return -1
end
local prune = args.prune or {}
for _, chain in ipairs(prune) do
  if redis.call('HGET', KEYS[2], chain.chain) ~= chain.head then
    return -2
  end
end
for _, chain in ipairs(prune) do
  redis.call('HDEL', KEYS[2], chain.chain)
end
redis.call('SET', KEYS[3], args.checkpoint)
return redis.call('XTRIM', KEYS[1], 'MINID', args.minId)

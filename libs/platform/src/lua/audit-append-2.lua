--[[
  Appends one entry to the hash-chained audit stream, if the chain head is still the one the caller
  computed the entry's hash from (compare-and-set; the caller retries with the returned head).

  KEYS[1] audit stream
  KEYS[2] chain head (hash of the newest entry)

  ARGV[1] the head the caller expects ("" for an empty chain)
  ARGV[2] the new entry's hash
  ARGV[3] the entry as JSON (without prevHash/hash)
  ARGV[4] MAXLEN is never applied: the log is append-only

  Returns
    {1, id}        appended with stream id
    {0, head}      the head moved; retry with this head
]]
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then
  return {0, head}
end
local id = redis.call('XADD', KEYS[1], '*', 'entry', ARGV[3], 'prev', ARGV[1], 'hash', ARGV[2])
redis.call('SET', KEYS[2], ARGV[2])
return {1, id}

--[[
  Included by the scripts that add to a run's event history (append-events, finish-run).

  appendEvents(key, channel, runIdJson, keep, events, from)
    key        the run hash; the history is its fields `e` (number of the newest event) and `e:<n>`
    channel    pub/sub channel of run events
    runIdJson  the run ID as a JSON string, put into the published message as it is
    keep       how many events the history keeps; older ones are dropped
    events     table of encoded events (JSON), appended from index `from` to its end
  Stores the events numbered after the newest one, drops what falls out of the bound, and publishes
  {"runId":…,"seq":<first number>,"events":[…]} in the same step: a follower that subscribed before it read
  the history gets every later event live, and tells the ones it read by their numbers.
  Returns the number of the first event appended.
]]
local function appendEvents(key, channel, runIdJson, keep, events, from)
  local count = #events - from + 1
  local last = redis.call('HINCRBY', key, 'e', count)
  local first = last - count + 1
  local fields = {}
  for i = from, #events do
    fields[#fields + 1] = 'e:' .. (first + i - from)
    fields[#fields + 1] = events[i]
  end
  redis.call('HSET', key, unpack(fields))
  if last > keep then
    local old = {}
    for seq = math.max(1, first - keep), last - keep do old[#old + 1] = 'e:' .. seq end
    redis.call('HDEL', key, unpack(old))
  end
  redis.call('PUBLISH', channel,
    '{"runId":' .. runIdJson .. ',"seq":' .. first .. ',"events":[' .. table.concat(events, ',', from) .. ']}')
  return first
end

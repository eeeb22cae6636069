--[[
  The call ledger: the states of one governed call and the transitions that make "an approved call runs exactly
  once" true, for every place that keeps a call (a run's hash in the agent worker, an approval's hash in the
  approvals API, a record of the MCP gateway). A script includes this file by the name CALL_LEDGER_INCLUDE
  (call-state.ts; not spelled out here: this text is inlined into every includer, and a resolved script holds no
  include directive) and calls these functions on its own key, inside its own atomic step, beside the checks that
  are its own (who owns the run, whose approval it is).

  A call lives in four fields of a hash, all under one prefix `p` (the worker's `c:<callId>:`, or "" for a hash that
  holds one call): <p>s state, <p>x execution token, <p>h heartbeat (Redis TIME, ms), <p>r result (JSON).
  The states are CallState in libs/call-ledger/src/call-state.ts (the TypeScript side of this table):

      pending --decide--> approved | denied
      approved --claim--> executing (token, heartbeat)       the only way into `executing`
      executing --complete(token)--> done | refused          only the token that claimed it
      executing --interrupt (heartbeat stale or missing)--> interrupted
      approved | denied --settle--> done | refused           a decision that ran nothing
      interrupted, and any state the caller names --reask--> pending (asked about again)

  Every function returns ok (true/false) and, when false, the state it found ('' when the call has none).
]]

local function ledgerNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- state, token, heartbeat (number or nil), result of the call under prefix p
local function ledgerRead(key, p)
  local f = redis.call('HMGET', key, p .. 's', p .. 'x', p .. 'h', p .. 'r')
  return f[1] or '', f[2] or nil, tonumber(f[3] or ''), f[4] or nil
end

local function ledgerIsIn(state, states)
  for _, s in ipairs(states) do
    if s == state then return true end
  end
  return false
end

-- Compare-and-set of the state alone (decide, settle, reask). `from` is a state or a list of states. Never into or
-- out of `executing`: those go through claim, complete and interrupt, which carry the token.
local function ledgerMove(key, p, from, to, resultJson)
  local state = redis.call('HGET', key, p .. 's') or ''
  local allowed = type(from) == 'table' and from or {from}
  if not ledgerIsIn(state, allowed) or state == 'executing' or to == 'executing' then return false, state end
  redis.call('HSET', key, p .. 's', to)
  if resultJson and resultJson ~= '' then redis.call('HSET', key, p .. 'r', resultJson) end
  return true, state
end

-- from (default 'approved') -> executing under `token`, first heartbeat now. The one door into `executing`.
local function ledgerClaim(key, p, token, from)
  local state = redis.call('HGET', key, p .. 's') or ''
  if state ~= (from or 'approved') then return false, state end
  redis.call('HSET', key, p .. 's', 'executing', p .. 'x', token, p .. 'h', ledgerNowMs())
  return true, state
end

-- Renews the heartbeat of an executing call, by the token that claimed it; writes nothing otherwise.
local function ledgerHeartbeat(key, p, token)
  local state, current = ledgerRead(key, p)
  if state ~= 'executing' or current ~= token then return false, state end
  redis.call('HSET', key, p .. 'h', ledgerNowMs())
  return true, state
end

-- executing -> done (or refused), with its result, by the token that claimed it: a tool that ran is recorded once,
-- whoever owns the surrounding run by then.
local function ledgerComplete(key, p, token, resultJson, to)
  local state, current = ledgerRead(key, p)
  if state ~= 'executing' or current ~= token then return false, state end
  redis.call('HSET', key, p .. 's', to or 'done', p .. 'r', resultJson)
  redis.call('HDEL', key, p .. 'x', p .. 'h')
  return true, state
end

--[[
  A call found `executing` by someone other than its executor. Returns one of
    'alive', ageMs        the heartbeat is younger than staleAfterMs: wait for the executor
    'interrupted', ''     the heartbeat is stale or missing: the call is `interrupted` (token and heartbeat gone);
                          it never runs again on its own: the caller asks about it again (reask)
    'done', resultJson    it finished meanwhile (done or refused)
    'other', state        it is in none of these states
]]
local function ledgerInterrupt(key, p, staleAfterMs)
  local state, _, beat, result = ledgerRead(key, p)
  if state == 'done' or state == 'refused' then return 'done', result or '' end
  if state ~= 'executing' then return 'other', state end
  local now = ledgerNowMs()
  if beat and now - beat < tonumber(staleAfterMs) then return 'alive', tostring(now - beat) end
  redis.call('HSET', key, p .. 's', 'interrupted')
  redis.call('HDEL', key, p .. 'x', p .. 'h')
  return 'interrupted', ''
end

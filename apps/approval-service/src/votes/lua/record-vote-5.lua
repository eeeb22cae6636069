--[[
  Records one approver's vote and decides the call when it settles it: a single deny (or respond: an answer in
  text instead of a verdict, which settles like a deny) decides at once, an approve decides once `quorum` distinct
  approvers approved. The first decision wins; every later
  vote gets ALREADY_DECIDED with who decided.

  Who may vote is not decided here: the caller asked deciders.ts (mayDecide) about the revision and route it read,
  and names them (`checkedRev`, `checkedRoute`). This script writes the vote only if they are still current, in the
  same step: an edit, a revision routed anew or an escalation since the check refuses the vote (EDITED,
  ROUTE_CHANGED), so a stale check never counts.

  An approve may carry edited arguments (`edit`, a new revision the caller checked and routed). They become the
  request's arguments and fingerprint (fields editedArgs, fp, rev, editedBy, editedAt; `request` keeps the arguments
  the agent asked for) and its routing rule (rule, why); every vote so far is set aside as `was:<approver>` (votes on
  the old arguments do not count for the new ones). With `edit.reroute` the revision routes elsewhere: its groups,
  quorum and escalation replace the request's (escalationGroups, the escalation timer), and the route version goes
  up. With `counts` the vote is the first of the new revision; without, only the edit is written.

  KEYS[1] the request's hash           {tag}:request:<requestId>
  KEYS[2] pending set                  {tag}:pending
  KEYS[3] decided set                  {tag}:decided
  KEYS[4] single-use marker of the link token that carries this vote ({tag}:used:<hash>), or any
          key of the tag when spendToken is false
  KEYS[5] due timers (zset)            {tag}:timers

  ARGV[1] JSON object (RecordVoteArgs in vote-store.ts):
    approver         approver ID
    decision         approve | deny | respond
    reason           reason ("" for none)
    response         respond only: the approver's text ("" otherwise), kept as outcomeResponse and in the vote
    channel          slack, email, web, api, cli
    now              now (ms)
    nowIso           now (ISO 8601)
    attempt          attempt the vote was cast on (number; left out = the request's)
    spendToken       true when KEYS[4] must be unused and is spent by this vote
    retentionMs      retention of a settled call (ms)
    publishCheckMs   publish check delay (ms)
    checkedRev       the revision of the arguments the caller checked the vote against (0: as the agent asked)
    checkedRoute     the route version the caller checked it against (field routeVersion; 0 when never changed)
    counts           false: write the edit only (its editor may not decide the revision's route), not the vote
    edit             approve only: {argsJson, fingerprint, atIso, rule, why, reroute} of the new revision;
                     reroute, left out when its route keeps the request's groups and quorum:
                     {groups (comma-separated), quorum, escalationGroups (comma-separated, "" for none),
                      escalateAt (ms; left out for no escalation)}

  When the vote decides the call, its escalation timer is removed and its expiry timer becomes the publish
  check: due at now + publishCheckMs, removed by mark-published once the decision is out. If the decider dies
  before that, the sweep finds the decision recorded but not published and publishes it (@app/requests/settle-request).

  Returns
    {1, requestJSON, approvers, channels, editedArgsJSON}
                                      decided now; approvers and the request's channels comma-separated,
                                      editedArgsJSON "" unless an approve settled edited arguments (outcome fields
                                      are in the hash)
    {2, approvals, quorum, rev, edited, callId}
                                      vote counted; the quorum is not reached yet (rev: the revision shown now;
                                      edited 1 when this vote made it)
    {3, rev, callId}                  the edit was written as revision rev, routed anew; the vote was not counted
    {-1}                              NOT_FOUND: no such request
    {-2, decidedBy, approvers}        ALREADY_DECIDED (or expired)
    {-5}                              ALREADY_VOTED: the approver already voted on this revision
    {-6}                              TOKEN_SPENT: the link token was used before
    {-7}                              EXPIRED: past its expiry (the sweep has not run yet)
    {-8}                              SUPERSEDED: the vote was cast on another attempt than the request's
    {-9}                              NOTICE: a manual-step notice, nothing to decide
   {-10, rev}                         EDITED: the arguments are not the revision checked (rev is current)
   {-12}                              ROUTE_CHANGED: the route changed since the check (routed anew, escalated)
]]
--- @include "@app/requests/settle-request"
--- @include "@app/requests/timer-member"

local args = cjson.decode(ARGV[1])
-- One read of every field the checks need (the hash is small; separate HGETs were a dozen calls).
local f = redis.call('HMGET', KEYS[1], 'status', 'attempt', 'outcomeDecidedBy', 'outcomeApprovers', 'expiresAt',
  'vote:' .. args.approver, 'approvals', 'approvers', 'quorum', 'request', 'requestId', 'channels', 'callId', 'rev',
  'editedArgs', 'routeVersion')
local status, attempt, decidedBy, decidedApprovers, expiresAtField = f[1], f[2], f[3], f[4], f[5]
local ownVote, approvalsSoFar, approversSoFar, quorum, requestJson = f[6], f[7], f[8], f[9], f[10]
local requestId, channels, callId, rev, editedArgs = f[11], f[12], f[13], tonumber(f[14] or '0'), f[15]
local routeVersion = tonumber(f[16] or '0')

if not status then return {-1} end
if args.spendToken and redis.call('EXISTS', KEYS[4]) == 1 then return {-6} end
if args.attempt ~= nil and tostring(args.attempt) ~= attempt then return {-8} end
if status == 'notice' then return {-9} end
if status ~= 'pending' then
  return {-2, decidedBy or status, decidedApprovers or ''}
end
local now = tonumber(args.now)
local expiresAt = tonumber(expiresAtField)
if expiresAt <= now then return {-7} end
if tonumber(args.checkedRev) ~= rev then return {-10, rev} end
if tonumber(args.checkedRoute) ~= routeVersion then return {-12} end

-- The new revision's route replaces the request's; its escalation is timed from now.
local function reroute(route)
  redis.call('HSET', KEYS[1], 'groups', route.groups, 'quorum', route.quorum, 'routeVersion', routeVersion + 1)
  quorum = tostring(route.quorum)
  local escalateTimer = timerMember('escalate', requestId, attempt)
  if route.escalateAt ~= nil and route.escalationGroups ~= '' then
    redis.call('HSET', KEYS[1], 'escalationGroups', route.escalationGroups)
    redis.call('ZADD', KEYS[5], route.escalateAt, escalateTimer)
  else
    redis.call('HDEL', KEYS[1], 'escalationGroups')
    redis.call('ZREM', KEYS[5], escalateTimer)
  end
end

local edit = args.decision == 'approve' and args.edit or nil
if edit then
  -- Votes on the old arguments are set aside (kept for the history), so everyone may vote on the new ones.
  local fields = redis.call('HKEYS', KEYS[1])
  for _, field in ipairs(fields) do
    if string.sub(field, 1, 5) == 'vote:' then
      redis.call('HSET', KEYS[1], 'was:' .. string.sub(field, 6), redis.call('HGET', KEYS[1], field))
      redis.call('HDEL', KEYS[1], field)
    end
  end
  rev = rev + 1
  editedArgs = edit.argsJson
  redis.call('HSET', KEYS[1], 'editedArgs', editedArgs, 'fp', edit.fingerprint, 'rev', rev,
    'editedBy', args.approver, 'editedAt', edit.atIso, 'approvals', 0, 'approvers', '', 'rule', edit.rule,
    'why', edit.why)
  if edit.reroute then reroute(edit.reroute) end
  if not args.counts then return {3, rev, callId} end
  approvalsSoFar = '0'
  approversSoFar = nil
  ownVote = nil
end
if ownVote then return {-5} end

local vote = {approver = args.approver, decision = args.decision, channel = args.channel, at = args.nowIso,
  rev = rev}
if args.reason ~= '' then vote.reason = args.reason end
if args.response ~= '' then vote.response = args.response end
if edit then vote.edited = true end
if args.spendToken then
  redis.call('SET', KEYS[4], args.approver, 'PX', math.max(expiresAt - now, 0) + 60000)
end

local approvers
if args.decision == 'deny' or args.decision == 'respond' then
  approvers = args.approver
  if args.response ~= '' then redis.call('HSET', KEYS[1], 'outcomeResponse', args.response) end
else
  local approvals = tonumber(approvalsSoFar or '0') + 1
  approvers = (approversSoFar and approversSoFar ~= '') and (approversSoFar .. ',' .. args.approver) or args.approver
  if approvals < tonumber(quorum) then
    redis.call('HSET', KEYS[1], 'vote:' .. args.approver, cjson.encode(vote), 'approvals', approvals,
      'approvers', approvers)
    return {2, approvals, tonumber(quorum), rev, edit and 1 or 0, callId}
  end
  redis.call('HSET', KEYS[1], 'approvals', approvals, 'approvers', approvers)
end

redis.call('HSET', KEYS[1], 'vote:' .. args.approver, cjson.encode(vote), 'status', 'decided',
  'outcomeDecision', args.decision, 'outcomeDecidedBy', 'person', 'outcomeApprovers', approvers,
  'outcomeReason', args.reason, 'outcomeAt', args.nowIso)
settleRequest({request = KEYS[1], pending = KEYS[2], settled = KEYS[3], timers = KEYS[5]}, requestId, attempt, now,
  args.retentionMs, args.publishCheckMs)

-- The caller keeps the trust counter (home tag): an approve of the arguments as asked adds one, anything else
-- (a deny, a respond, an approve of edited arguments) starts it over; settledArgs tells it which.
local settledArgs = ''
if args.decision == 'approve' and editedArgs then settledArgs = editedArgs end
return {1, requestJson, approvers, channels or '', settledArgs}

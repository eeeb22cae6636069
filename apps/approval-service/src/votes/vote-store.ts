// Votes and notices' done in Redis: each is one script on the request's hash (record-vote, complete-notice), written
// only if the revision and route the caller checked (deciders.ts, vote-check.ts) are still current, in the same step,
// so two channels deciding at once cannot both win and a stale check never counts.
import { createHash } from 'node:crypto';
import type { ApprovalRequest, DecisionValue } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import type { Outcome, RevisionRoute, VoteChannel } from '../requests/approval-types';
import { parseRequest } from '../requests/request-codec';
import { noticeRefusal, voteRefusal } from './vote-errors';

const SCRIPTS = {
  recordVote: LuaScript.load(__dirname, 'record-vote-5.lua'),
  completeNotice: LuaScript.load(__dirname, 'complete-notice-4.lua'),
};

/**
 * A vote the caller checked (mayDecide in deciders.ts) against the revision and route `checked` names; the store
 * writes it only if both are still current, in the same step.
 */
export interface CheckedVote {
  requestId: string;
  approver: string;
  decision: DecisionValue;
  reason?: string;
  /** Decision "respond": the approver's text. */
  response?: string;
  channel: VoteChannel;
  /** The attempt a Slack button or email link was made for; undefined = the request's. */
  attempt?: number;
  /** The ID of a single-use link token spent by this vote (its decoded MAC: one token, however spelled). */
  singleUseToken?: string;
  /** The revision (rev) and route version the check was made on. */
  checked: { rev: number; routeVersion: number };
  /**
   * Approve only: arguments the approver edited into a new revision (validated by the caller), with the route that
   * revision gets; `rerouted` when its groups or quorum differ from the request's (then they replace them).
   */
  edit?: { args: Record<string, unknown>; fingerprint: string; route: RevisionRoute; rerouted: boolean };
  /** False: the edit is written, but this vote does not count (the editor may not decide the revision's new route). */
  counts: boolean;
}

export type VoteResult =
  /** `channels`: where the request was routed (which channels may have to show the outcome). */
  | { status: 'decided'; callId: string; request: ApprovalRequest; outcome: Outcome; channels: string[] }
  | {
      status: 'vote_recorded';
      callId: string;
      approvals: number;
      quorum: number;
      /** The revision of the arguments shown now (0: as the agent asked). */
      rev: number;
      /** This vote edited the arguments (and so started revision `rev`). */
      editedNow: boolean;
    }
  /** The edit made revision `rev`, routed anew; the vote itself was not counted (CheckedVote.counts false). */
  | { status: 'rerouted'; callId: string; rev: number };

export class VoteStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
    /** How long a settled call stays readable. */
    private readonly retentionMs: number,
    /** How long a settled request's decision may stay unpublished before the timer sweep publishes it. */
    private readonly publishCheckMs: number,
  ) {}

  /**
   * Records a vote checked against `vote.checked`; throws VoteRefusedError when the request is settled, gone, or moved
   * on since the check (edited, routed anew, escalated), when the approver voted already, or a link was used.
   */
  async recordVote(vote: CheckedVote, now = Date.now()): Promise<VoteResult> {
    const shard = this.keys.shardOf(vote.requestId);
    const onceKey = vote.singleUseToken
      ? shard.usedToken(createHash('sha256').update(vote.singleUseToken).digest('hex'))
      : shard.usedToken('-');
    const reply = (await SCRIPTS.recordVote.run(
      this.redis,
      [shard.request(vote.requestId), shard.pending, shard.decided, onceKey, shard.timers],
      [encodeScriptArgs<RecordVoteArgs>(recordVoteArgs(vote, now, this.retentionMs, this.publishCheckMs))],
    )) as (string | number)[];
    if (reply[0] === 1) {
      const outcome: Outcome = {
        decision: vote.decision,
        decidedBy: 'person',
        approvers: String(reply[2]).split(','),
        reason: vote.reason || undefined,
        decidedAt: new Date(now).toISOString(),
        ...(vote.decision === 'respond' && vote.response ? { response: vote.response } : {}),
        ...(reply[4] ? { args: JSON.parse(String(reply[4])) as Record<string, unknown> } : {}),
      };
      const channels = reply[3] ? String(reply[3]).split(',') : [];
      const request = parseRequest(reply[1]);
      return { status: 'decided', callId: request.callId, request, outcome, channels };
    }
    if (reply[0] === 2)
      return {
        status: 'vote_recorded',
        callId: String(reply[5]),
        approvals: Number(reply[1]),
        quorum: Number(reply[2]),
        rev: Number(reply[3] ?? 0),
        editedNow: Number(reply[4] ?? 0) === 1,
      };
    if (reply[0] === 3) return { status: 'rerouted', rev: Number(reply[1]), callId: String(reply[2]) };
    throw voteRefusal(reply, vote.requestId);
  }

  /** Marks a notice done (see complete-notice-4.lua); throws VoteRefusedError when it cannot be. */
  async completeNotice(
    done: { requestId: string; approver: string; note?: string },
    now = Date.now(),
  ): Promise<{ request: ApprovalRequest; doneAt: string }> {
    const shard = this.keys.shardOf(done.requestId);
    const nowIso = new Date(now).toISOString();
    const reply = (await SCRIPTS.completeNotice.run(
      this.redis,
      [shard.request(done.requestId), shard.notices, shard.decided, shard.timers],
      [
        encodeScriptArgs<CompleteNoticeArgs>({
          approver: done.approver,
          note: done.note ?? '',
          now,
          nowIso,
          retentionMs: this.retentionMs,
          publishCheckMs: this.publishCheckMs,
          changesChannel: this.keys.changes,
        }),
      ],
    )) as (string | number)[];
    if (reply[0] === 1) return { request: parseRequest(reply[1]), doneAt: nowIso };
    throw noticeRefusal(reply, done.requestId);
  }
}

/** The encoded argument of record-vote-5.lua for a checked vote. */
function recordVoteArgs(
  vote: CheckedVote,
  now: number,
  retentionMs: number,
  publishCheckMs: number,
): RecordVoteArgs {
  const { edit } = vote;
  const escalation = edit?.route.escalation;
  return {
    approver: vote.approver,
    decision: vote.decision,
    reason: vote.reason ?? '',
    response: vote.decision === 'respond' ? (vote.response ?? '') : '',
    channel: vote.channel,
    now,
    nowIso: new Date(now).toISOString(),
    attempt: vote.attempt,
    spendToken: Boolean(vote.singleUseToken),
    retentionMs,
    publishCheckMs,
    checkedRev: vote.checked.rev,
    checkedRoute: vote.checked.routeVersion,
    counts: vote.counts,
    edit: edit && {
      argsJson: JSON.stringify(edit.args),
      fingerprint: edit.fingerprint,
      atIso: new Date(now).toISOString(),
      rule: edit.route.rule,
      why: edit.route.why,
      reroute: edit.rerouted
        ? {
            groups: edit.route.groups.join(','),
            quorum: edit.route.quorum,
            escalationGroups: escalation?.groups.join(',') ?? '',
            escalateAt: escalation?.at,
          }
        : undefined,
    },
  };
}

// The encoded argument of each script (ARGV[1], a JSON object): the names its header lists.
type RecordVoteArgs = {
  approver: string;
  decision: DecisionValue;
  reason: string;
  response: string;
  channel: VoteChannel;
  now: number;
  nowIso: string;
  attempt?: number;
  spendToken: boolean;
  retentionMs: number;
  publishCheckMs: number;
  checkedRev: number;
  checkedRoute: number;
  counts: boolean;
  edit?: {
    argsJson: string;
    fingerprint: string;
    atIso: string;
    rule: string;
    why: string;
    reroute?: { groups: string; quorum: number; escalationGroups: string; escalateAt?: number };
  };
};
type CompleteNoticeArgs = {
  approver: string;
  note: string;
  now: number;
  nowIso: string;
  retentionMs: number;
  publishCheckMs: number;
  changesChannel: string;
};

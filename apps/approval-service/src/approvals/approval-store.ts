// Approval state in Redis, keyed by request ID. Every transition is one Lua script, so two channels deciding at once
// cannot both win and a redelivered message cannot create a request twice. The scripts also keep the request's
// timers (its shard's timers) in step, so scheduling and cancelling a timer never costs a round trip of its own.
// With APPROVAL_SHARDS > 1 a request lives in the shard of its request ID (approval-keys.ts): everything about one
// request is one shard's, and the lists (list, newest, recent, count) are read from every shard and merged.
import { createHash, randomBytes } from 'node:crypto';
import {
  APPROVAL_LIST_ORDER,
  ApprovalRequestSchema,
  type ApprovalCursor,
  type ApprovalRequest,
  type ApprovalStatus,
  type ApprovalView,
  type DecidedBy,
  type DecisionValue,
  type ToolCatalogEntry,
} from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import { z } from 'zod';
import { trustField, type ApprovalKeys, type ApprovalShard } from './approval-keys';
import { noticeRefusal, voteRefusal } from './approval-errors';

const SCRIPTS = {
  create: LuaScript.load(__dirname, 'create-request-7.lua'),
  recordVote: LuaScript.load(__dirname, 'record-vote-5.lua'),
  expire: LuaScript.load(__dirname, 'expire-request-5.lua'),
  escalate: LuaScript.load(__dirname, 'escalate-request-1.lua'),
  markPublished: LuaScript.load(__dirname, 'mark-published-2.lua'),
  readPage: LuaScript.load(__dirname, 'read-page-1.lua'),
  completeNotice: LuaScript.load(__dirname, 'complete-notice-4.lua'),
  countTrust: LuaScript.load(__dirname, 'count-trust-1.lua'),
};

/** Each Slack post and email is reserved before it is made and recorded after (see claim-delivery-1.lua). */
const DELIVERY_SCRIPTS = {
  claim: LuaScript.load(__dirname, 'claim-delivery-1.lua'),
  record: LuaScript.load(__dirname, 'record-delivery-1.lua'),
  release: LuaScript.load(__dirname, 'release-delivery-1.lua'),
};

/** One delivery of a request: `key` names it within the request, e.g. `slack:#ops`, `email:bob`. */
export interface DeliveryRef {
  requestId: string;
  attempt: number;
  key: string;
}

/**
 * What claimDelivery found. `claimed`: deliver, then recordDelivery (or releaseDelivery if it certainly did not
 * happen). `delivered`: an earlier try made it; `receipt` is what it recorded. `in_doubt`: an earlier try reserved
 * it at `reservedAt` (ms) and never recorded or released it, so it may or may not have happened. `not_due`:
 * nothing to deliver (the request is gone, replaced by a newer attempt, or not in a status the delivery is for).
 */
export type DeliveryClaim =
  | { status: 'claimed'; ref: DeliveryRef; reservation: string }
  | { status: 'delivered'; receipt: string }
  | { status: 'in_doubt'; reservedAt: number }
  | { status: 'not_due' };

/** What a delivery leaves to remember, recorded in the same step as the delivery itself. */
export interface DeliveryRecord {
  /** Given back by claimDelivery to a retry (e.g. where a Slack message landed). */
  receipt: string;
  /** A Slack message the outcome update edits. */
  slackMessage?: { channel: string; ts: string };
  /** An approver who was emailed the request (an expiry is emailed to them). */
  emailed?: string;
}

// The encoded argument of each script that takes one (ARGV[1], a JSON object): the names its header lists.
type CreateRequestArgs = {
  requestId: string;
  callId: string;
  runId: string;
  attempt: number;
  requestJson: string;
  status: NewApproval['status'];
  groups: string;
  quorum: number;
  channels: string;
  now: number;
  expiresAt: number;
  requester: string;
  trustCount: number;
  refusal?: { reason: string; decidedBy: DecidedBy; at: string };
  escalation?: { at: number; groups: string };
  retentionMs: number;
  publishCheckMs: number;
  changesChannel: string;
  rule?: string;
  why?: string;
};
type RecordVoteArgs = {
  approver: string;
  decision: DecisionValue;
  reason: string;
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
type ExpireRequestArgs = {
  attempt: number;
  now: number;
  nowIso: string;
  retentionMs: number;
  publishCheckMs: number;
};

const VoteSchema = z.object({
  approver: z.string(),
  decision: z.enum(['approve', 'deny']),
  reason: z.string().optional(),
  channel: z.enum(['slack', 'email', 'web', 'api', 'cli']),
  at: z.string(),
  /** The revision of the arguments the vote was cast on (0: as the agent asked). */
  rev: z.number().int().min(0).default(0),
  /** This vote edited the arguments (and so started their revision). */
  edited: z.boolean().optional(),
});
export type Vote = z.infer<typeof VoteSchema>;
export type VoteChannel = Vote['channel'];

export interface Outcome {
  decision: DecisionValue;
  decidedBy: DecidedBy;
  approvers: string[];
  reason?: string;
  decidedAt: string;
  /** Approved with arguments an approver edited: the worker runs these (after its own checks). */
  args?: Record<string, unknown>;
  /** Decided by this standing rule (decidedBy "policy"). */
  rule?: string;
}

/** An approver's edit of the arguments: the request shows these now, under a new revision. */
export interface Edit {
  args: Record<string, unknown>;
  fingerprint: string;
  by: string;
  at: string;
  rev: number;
}

/** Everything stored about one request. */
export interface StoredApproval {
  request: ApprovalRequest;
  status: ApprovalStatus;
  /** The groups of the current revision's route; the escalation groups are among them once it escalated. */
  groups: string[];
  quorum: number;
  /** Who is added when the request escalates (the current revision's route's escalation). */
  escalationGroups: string[];
  /** Counts every change of the route (a revision routed anew, an escalation): a vote checked before one is refused. */
  routeVersion: number;
  channels: string[];
  createdAt: number;
  expiresAt: number;
  votes: Vote[];
  /** Votes on arguments that were edited since: they do not count. */
  setAside: Vote[];
  /** The latest edit, when an approver edited the arguments. */
  edited?: Edit;
  trustCount: number;
  outcome?: Outcome;
  published: boolean;
  slackMessages: { channel: string; ts: string }[];
  /** Approvers the request was emailed to: an expiry is emailed to them, and only them. */
  emailed: string[];
  /** The routing rule that sent its current revision to its groups, and why it matched. */
  route?: { rule: string; why: string };
  /** What the tool does, from the tool catalog; filled in when read for showing (see ApprovalsService.describe). */
  tool?: ToolCatalogEntry;
  /** A notice a person marked done. */
  done?: { by: string; at: string; note?: string };
}

export interface NewApproval {
  request: ApprovalRequest;
  /** The routing rule that matched, and why (shown to approvers). */
  route?: { rule: string; why: string };
  status: 'pending' | 'notice' | 'decided';
  groups: string[];
  quorum: number;
  channels: string[];
  now: number;
  expiresAt: number;
  /** Only for status "pending": when to add which groups (scheduled with the request). */
  escalation?: { at: number; groups: string[] };
  /** Only for status "decided": refused at once (no route). */
  refusal?: { decidedBy: DecidedBy; reason: string; at: string };
}

/** The route a revision of edited arguments gets (from routeRequest), as the store writes it. */
export interface RevisionRoute {
  rule: string;
  why: string;
  groups: string[];
  quorum: number;
  escalation?: { at: number; groups: string[] };
}

/**
 * A vote the caller checked (mayDecide in deciders.ts) against the revision and route `checked` names; the store
 * writes it only if both are still current, in the same step.
 */
export interface CheckedVote {
  requestId: string;
  approver: string;
  decision: DecisionValue;
  reason?: string;
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

/** `notDueFor`: the timer ran early and was moved back to the expiry. */
export type ExpireResult =
  { expired: ApprovalRequest } | 'notice_retired' | { notDueFor: number } | { nothingToDo: string };

export interface ListOptions {
  /**
   * The lists to read, walked one after the other, each in score order (pending and notices: created; decided
   * and expired: settled).
   * @defaultValue all of them, in APPROVAL_LIST_ORDER
   */
  statuses?: readonly ApprovalStatus[];
  /** The most entries to read (≥ 1); a page holds fewer when hashes aged out. */
  limit: number;
  /** Read strictly after this entry: the `next` of the previous page. */
  after?: ApprovalCursor;
}

export interface ApprovalPage {
  approvals: StoredApproval[];
  /** Where the next page starts; undefined when nothing followed this page when it was read. */
  next?: ApprovalCursor;
}

/** `escalated`: the groups were added now; `again`: an earlier run of the timer added them; `no`: not pending. */
export type EscalateResult = { status: 'escalated' | 'again'; groups: string[] } | { status: 'no' };

export class ApprovalStore {
  constructor(
    private readonly redis: RedisClient,
    readonly keys: ApprovalKeys,
    /** How long a settled call stays readable. */
    private readonly retentionMs: number,
    /**
     * How long after a request is settled its decision may stay unpublished before the timer sweep publishes it
     * (the settling replica is presumed dead). Also the sweep's lease, so a slow publish is not redone early.
     */
    private readonly publishCheckMs: number,
  ) {}

  /**
   * Stores a request; `created: false` means this request was already stored (a redelivery). A stored pending
   * request or notice is announced on the live-update channel by the same script.
   */
  async create(input: NewApproval): Promise<{ created: boolean; trustCount: number; status: string }> {
    const { request: r, refusal } = input;
    const shard = this.keys.shardOf(r.requestId);
    const escalation = input.status === 'pending' ? input.escalation : undefined;
    // The trust counters are every requester's, not this request's, so they are read here, not by the script.
    const trustCount = Number(
      (await this.redis.hget(this.keys.trust, trustField(r.requester, r.toolName))) ?? 0,
    );
    const reply = (await SCRIPTS.create.run(
      this.redis,
      [
        shard.request(r.requestId),
        shard.pending,
        shard.notices,
        shard.decided,
        shard.expired,
        shard.timers,
        shard.callRequests(r.callId),
      ],
      [
        encodeScriptArgs<CreateRequestArgs>({
          requestId: r.requestId,
          callId: r.callId,
          runId: r.runId,
          attempt: r.attempt,
          requestJson: JSON.stringify(r),
          status: input.status,
          groups: input.groups.join(','),
          quorum: input.quorum,
          channels: input.channels.join(','),
          now: input.now,
          expiresAt: input.expiresAt,
          requester: r.requester,
          trustCount,
          refusal: refusal && { reason: refusal.reason, decidedBy: refusal.decidedBy, at: refusal.at },
          escalation: escalation && { at: escalation.at, groups: escalation.groups.join(',') },
          retentionMs: this.retentionMs,
          publishCheckMs: this.publishCheckMs,
          changesChannel: this.keys.changes,
          rule: input.route?.rule,
          why: input.route?.why,
        }),
      ],
    )) as [number, number | string];
    if (reply[0] === 1) return { created: true, trustCount, status: input.status };
    return { created: false, trustCount: 0, status: String(reply[1]) };
  }

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

  /**
   * Counts a request people decided into its requester's trust in the tool (see count-trust-1.lua): an approve of
   * the arguments as asked adds one, a deny or an approve of edited arguments starts over. Under the home tag (every
   * shard's requests count), so after the vote's script and apart from it: the caller runs it beside publishing the
   * decision, and a process that dies in between loses one count of an advisory figure, never a decision.
   */
  async countTrust(request: ApprovalRequest, outcome: Outcome): Promise<void> {
    await SCRIPTS.countTrust.run(
      this.redis,
      [this.keys.trust],
      [
        trustField(request.requester, request.toolName),
        outcome.decision === 'approve' && !outcome.args ? 'approve' : 'reset',
        Date.parse(outcome.decidedAt),
      ],
    );
  }

  async expire(requestId: string, attempt: number, now = Date.now()): Promise<ExpireResult> {
    const shard = this.keys.shardOf(requestId);
    const reply = (await SCRIPTS.expire.run(
      this.redis,
      [shard.request(requestId), shard.pending, shard.expired, shard.notices, shard.timers],
      [
        encodeScriptArgs<ExpireRequestArgs>({
          attempt,
          now,
          nowIso: new Date(now).toISOString(),
          retentionMs: this.retentionMs,
          publishCheckMs: this.publishCheckMs,
        }),
      ],
    )) as [number, string | number];
    switch (reply[0]) {
      case 1:
        return { expired: parseRequest(reply[1]) };
      case 2:
        return 'notice_retired';
      case 3:
        return { notDueFor: Number(reply[1]) };
      default:
        return { nothingToDo: String(reply[1]) };
    }
  }

  /**
   * The call ID of a request and the groups it is routed to now (escalation included); '' and [] for an unknown
   * request. One HMGET.
   */
  async routeOf(requestId: string): Promise<{ callId: string; groups: string[] }> {
    const [callId, groups] = await this.redis.hmget(this.keys.request(requestId), 'callId', 'groups');
    return { callId: callId ?? '', groups: groups ? groups.split(',') : [] };
  }

  /** Adds the escalation groups stored with the request, if it is still pending. */
  async escalate(requestId: string, attempt: number): Promise<EscalateResult> {
    const reply = (await SCRIPTS.escalate.run(this.redis, [this.keys.request(requestId)], [attempt])) as [
      number,
      string?,
    ];
    if (reply[0] === 0) return { status: 'no' };
    return { status: reply[0] === 1 ? 'escalated' : 'again', groups: String(reply[1]).split(',') };
  }

  /** The decision is on the queue: nothing is left to check, so the attempt's timers go too. */
  async markPublished(requestId: string, attempt: number): Promise<void> {
    const shard = this.keys.shardOf(requestId);
    await SCRIPTS.markPublished.run(
      this.redis,
      [shard.request(requestId), shard.timers],
      [requestId, attempt],
    );
  }

  async rememberEmailed(requestId: string, approver: string): Promise<void> {
    await this.redis.hset(this.keys.request(requestId), `emailed:${approver}`, '1');
  }

  async get(requestId: string): Promise<StoredApproval | undefined> {
    return parseStored(await this.redis.hgetall(this.keys.request(requestId)));
  }

  /**
   * Every stored request that carries this call ID (several when runs share a call ID, a later turn reused it, or the
   * call was asked again). Requests that aged out leave the set as they are found missing.
   */
  async requestsOfCall(callId: string): Promise<StoredApproval[]> {
    const perShard = await Promise.all(
      this.keys.shards.map(async (shard) => {
        const key = shard.callRequests(callId);
        const requestIds = await this.redis.smembers(key);
        const hashes = await Promise.all(requestIds.map((id) => this.redis.hgetall(shard.request(id))));
        const gone = requestIds.filter((_, i) => Object.keys(hashes[i]).length === 0);
        if (gone.length > 0) await this.redis.srem(key, ...gone);
        return hashes;
      }),
    );
    return perShard
      .flat()
      .map(parseStored)
      .filter((a): a is StoredApproval => a !== undefined)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * One page of the lists, reading at most `limit` entries (and peeking one more to know whether a next page
   * exists). An entry that stays in its list during a walk is returned exactly once, whatever else comes and
   * goes. Entries whose hash aged out are skipped and removed from their list. With several shards, each list is
   * read from every shard after the same cursor and merged in (score, request ID) order, so the walk is the same as
   * over one list holding them all.
   */
  async list({ statuses = APPROVAL_LIST_ORDER, limit, after }: ListOptions): Promise<ApprovalPage> {
    if (!(limit >= 1)) throw new RangeError(`limit must be at least 1, got ${limit}`);
    const start = after ? statuses.indexOf(after.status) : 0;
    if (start < 0)
      throw new RangeError(`a cursor of list ${after?.status} cannot page ${statuses.join(', ')}`);
    const read: ApprovalCursor[] = [];
    let more = false;
    for (const status of statuses.slice(start)) {
      const wanted = limit - read.length;
      const entries = await this.readList(status, wanted + 1, after?.status === status ? after : undefined);
      read.push(...entries.slice(0, wanted));
      if (entries.length > wanted) {
        more = true;
        break;
      }
    }
    const hashes = await Promise.all(read.map((e) => this.redis.hgetall(this.keys.request(e.requestId))));
    const missing = read.filter((_, i) => Object.keys(hashes[i]).length === 0);
    await Promise.all(
      missing.map((e) => this.redis.zrem(listKey(this.keys.shardOf(e.requestId), e.status), e.requestId)),
    );
    return {
      approvals: hashes.map(parseStored).filter((a): a is StoredApproval => a !== undefined),
      next: more ? read.at(-1) : undefined,
    };
  }

  /**
   * The newest `count` entries of a list (by score: pending and notices by creation), oldest of them first. One read
   * from the end of each shard's list, for the inbox: a flood that fills the list's start never hides the newest
   * requests.
   */
  async newest(status: ApprovalStatus, count: number): Promise<StoredApproval[]> {
    const perShard = await Promise.all(
      this.keys.shards.map(async (shard) =>
        scored(await this.redis.zrange(listKey(shard, status), -count, -1, 'WITHSCORES')),
      ),
    );
    const entries = perShard.flat().sort(byScoreThenId).slice(-count);
    return this.readStored(entries.map((e) => e.requestId));
  }

  /** How many entries a list holds (including settled calls whose hash aged out and that no page read yet). */
  async count(status: ApprovalStatus): Promise<number> {
    const counts = await Promise.all(
      this.keys.shards.map((shard) => this.redis.zcard(listKey(shard, status))),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /**
   * Drops requests settled longer ago than the retention from the decided and expired sets: their hashes expired
   * then (PEXPIRE at settling), so the sets stay as long as what can still be read.
   */
  async trimSettled(now = Date.now()): Promise<number> {
    const before = now - this.retentionMs;
    const removed = await Promise.all(
      this.keys.shards.flatMap((shard) =>
        [shard.decided, shard.expired].map((key) => this.redis.zremrangebyscore(key, '-inf', before)),
      ),
    );
    return removed.reduce((sum, n) => sum + n, 0);
  }

  /**
   * Reserves a delivery unless an earlier try reserved or made it; a new reservation only while the request is in
   * one of `statuses` (atomically with the check, so a request settled meanwhile is not notified).
   */
  async claimDelivery(
    ref: DeliveryRef,
    statuses: readonly ApprovalStatus[],
    now = Date.now(),
  ): Promise<DeliveryClaim> {
    const reservation = `reserved:${now}:${randomBytes(4).toString('hex')}`;
    const reply = (await DELIVERY_SCRIPTS.claim.run(
      this.redis,
      [this.keys.request(ref.requestId)],
      [ref.attempt, deliveryField(ref), reservation, statuses.join(',')],
    )) as [number, string?];
    if (reply[0] === 1) return { status: 'claimed', ref, reservation };
    if (reply[0] === 0) return { status: 'not_due' };
    const held = String(reply[1]);
    if (held.startsWith('delivered:'))
      return { status: 'delivered', receipt: held.slice('delivered:'.length) };
    return { status: 'in_doubt', reservedAt: Number(held.split(':')[1]) };
  }

  /** Records a claimed delivery; false when the reservation is gone (the attempt was replaced): nothing written. */
  async recordDelivery(
    claim: Extract<DeliveryClaim, { status: 'claimed' }>,
    record: DeliveryRecord,
  ): Promise<boolean> {
    const also: string[] = [];
    if (record.slackMessage) also.push(`slack:${record.slackMessage.channel}`, record.slackMessage.ts);
    if (record.emailed) also.push(`emailed:${record.emailed}`, '1');
    const reply = await DELIVERY_SCRIPTS.record.run(
      this.redis,
      [this.keys.request(claim.ref.requestId)],
      [deliveryField(claim.ref), claim.reservation, `delivered:${record.receipt}`, ...also],
    );
    return reply === 1;
  }

  /** Gives up a claimed delivery that certainly did not happen, so a retry may make it. */
  async releaseDelivery(claim: Extract<DeliveryClaim, { status: 'claimed' }>): Promise<void> {
    await DELIVERY_SCRIPTS.release.run(
      this.redis,
      [this.keys.request(claim.ref.requestId)],
      [deliveryField(claim.ref), claim.reservation],
    );
  }

  /** Remembers a Slack request signature for `ttlSeconds`; false when it was seen already (a replay). */
  async rememberSlackSignature(signature: string, ttlSeconds: number): Promise<boolean> {
    const reply = await this.redis.set(this.keys.seenSlackSignature(signature), '1', 'EX', ttlSeconds, 'NX');
    return reply === 'OK';
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

  /**
   * The newest settled requests (decided and expired), newest first, at most `limit` of each list of each shard read;
   * those whose hash aged out are left out. For the history view, which filters them by approver afterwards.
   */
  async recent(limit: number): Promise<StoredApproval[]> {
    const lists = await Promise.all(
      this.keys.shards.flatMap((shard) =>
        [shard.decided, shard.expired].map((key) =>
          this.redis.zrevrangebyscore(key, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, limit),
        ),
      ),
    );
    const entries = lists.flatMap(scored).sort((a, b) => byScoreThenId(b, a));
    return this.readStored(entries.slice(0, limit).map((e) => e.requestId));
  }

  /** The stored requests of these IDs, in this order; those whose hash aged out are left out. */
  private async readStored(requestIds: string[]): Promise<StoredApproval[]> {
    const hashes = await Promise.all(requestIds.map((id) => this.redis.hgetall(this.keys.request(id))));
    return hashes.map(parseStored).filter((a): a is StoredApproval => a !== undefined);
  }

  /**
   * Up to `count` entries of one list, strictly after `after`, in (score, request ID) order: that many from each
   * shard, merged, so the first `count` of all are among them.
   */
  private async readList(status: ApprovalStatus, count: number, after?: ApprovalCursor) {
    const perShard = await Promise.all(
      this.keys.shards.map(
        async (shard) =>
          (await SCRIPTS.readPage.run(
            this.redis,
            [listKey(shard, status)],
            [after?.score ?? '', after?.requestId ?? '', count],
          )) as string[],
      ),
    );
    const entries = perShard.flatMap(scored);
    if (perShard.length > 1) entries.sort(byScoreThenId);
    return entries
      .slice(0, count)
      .map((e): ApprovalCursor => ({ status, requestId: e.requestId, score: e.score }));
  }
}

/** A status list of one shard. */
function listKey(shard: ApprovalShard, status: ApprovalStatus): string {
  return { pending: shard.pending, decided: shard.decided, expired: shard.expired, notice: shard.notices }[
    status
  ];
}

/** A flat reply `[member, score, member, score, …]` as entries (scores as Redis printed them). */
function scored(reply: string[]): { requestId: string; score: string }[] {
  const entries: { requestId: string; score: string }[] = [];
  for (let i = 0; i < reply.length; i += 2) entries.push({ requestId: reply[i], score: reply[i + 1] });
  return entries;
}

/** The order of a sorted set: by score, then by member byte by byte (IDs are ASCII, so as JavaScript compares them). */
function byScoreThenId(
  a: { requestId: string; score: string },
  b: { requestId: string; score: string },
): number {
  const byScore = Number(a.score) - Number(b.score);
  if (byScore !== 0) return byScore;
  return a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0;
}

const deliveryField = (ref: DeliveryRef) => `delivery:${ref.key}`;

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

function parseRequest(json: unknown): ApprovalRequest {
  return ApprovalRequestSchema.parse(JSON.parse(String(json)));
}

/** A call hash as read by HGETALL; undefined when it holds no request (gone, or never stored). */
export function parseStored(hash: Record<string, string>): StoredApproval | undefined {
  if (!hash.request) return undefined;
  const votes: Vote[] = [];
  const setAside: Vote[] = [];
  const slackMessages: { channel: string; ts: string }[] = [];
  const emailed: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith('vote:')) votes.push(VoteSchema.parse(JSON.parse(value)));
    if (field.startsWith('was:')) setAside.push(VoteSchema.parse(JSON.parse(value)));
    if (field.startsWith('slack:')) slackMessages.push({ channel: field.slice('slack:'.length), ts: value });
    if (field.startsWith('emailed:')) emailed.push(field.slice('emailed:'.length));
  }
  votes.sort((a, b) => a.at.localeCompare(b.at));
  setAside.sort((a, b) => a.at.localeCompare(b.at));
  const edited: Edit | undefined = hash.editedArgs
    ? {
        args: JSON.parse(hash.editedArgs) as Record<string, unknown>,
        fingerprint: hash.fp,
        by: hash.editedBy,
        at: hash.editedAt,
        rev: Number(hash.rev ?? 0),
      }
    : undefined;
  return {
    request: parseRequest(hash.request),
    status: hash.status as ApprovalStatus,
    groups: hash.groups ? hash.groups.split(',') : [],
    quorum: Number(hash.quorum),
    escalationGroups: hash.escalationGroups ? hash.escalationGroups.split(',') : [],
    routeVersion: Number(hash.routeVersion ?? 0),
    channels: hash.channels ? hash.channels.split(',') : [],
    createdAt: Number(hash.createdAt),
    expiresAt: Number(hash.expiresAt),
    votes,
    setAside,
    edited,
    trustCount: Number(hash.trustCount ?? 0),
    outcome: hash.outcomeDecision
      ? {
          decision: hash.outcomeDecision as DecisionValue,
          decidedBy: hash.outcomeDecidedBy as DecidedBy,
          approvers: hash.outcomeApprovers ? hash.outcomeApprovers.split(',') : [],
          reason: hash.outcomeReason || undefined,
          decidedAt: hash.outcomeAt,
          // Only an approval by people runs edited arguments; an expiry or a deny after an edit runs nothing.
          ...(edited && hash.outcomeDecision === 'approve' && hash.outcomeDecidedBy === 'person'
            ? { args: edited.args }
            : {}),
          ...(hash.standingRule ? { rule: hash.standingRule } : {}),
        }
      : undefined,
    done: hash.doneBy
      ? { by: hash.doneBy, at: hash.doneAt, ...(hash.doneNote ? { note: hash.doneNote } : {}) }
      : undefined,
    published: hash.published === '1',
    slackMessages,
    emailed,
    route: hash.rule ? { rule: hash.rule, why: hash.why ?? '' } : undefined,
  };
}

/** Consecutive approvals after which approvers are told to consider promoting the tool to auto. */
export const TRUST_THRESHOLD = 5;

export function trustSuggestion(
  approval: Pick<StoredApproval, 'trustCount' | 'request'>,
): string | undefined {
  if (approval.trustCount < TRUST_THRESHOLD) return undefined;
  const { toolName, requester } = approval.request;
  return `${approval.trustCount} approvals in a row of ${toolName} for ${requester}: consider a standing rule, so its next calls are approved by policy for a while`;
}

export function toView(approval: StoredApproval): ApprovalView {
  return {
    request: approval.request,
    status: approval.status,
    groups: approval.groups,
    quorum: approval.quorum,
    expiresAt: new Date(approval.expiresAt).toISOString(),
    votes: approval.votes,
    outcome: approval.outcome,
    trustSuggestion: trustSuggestion(approval),
    ...(approval.route ? { route: approval.route } : {}),
    ...(approval.edited ? { edited: approval.edited } : {}),
    ...(approval.setAside.length > 0 ? { setAside: approval.setAside } : {}),
    ...(approval.done ? { done: approval.done } : {}),
    ...(approval.tool
      ? {
          tool: {
            description: approval.tool.description,
            tier: approval.tool.tier,
            argsSchema: approval.tool.argsSchema,
          },
        }
      : {}),
  };
}

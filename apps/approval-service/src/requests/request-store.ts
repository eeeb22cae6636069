// Approval requests in Redis, keyed by request ID: storing one as it comes in (one script, so a redelivered message
// cannot store it twice, and its timers are scheduled in the same step), reading one, a call ID's requests, and the
// status lists a page at a time. The moves a request makes later are the scripts of the features that make them
// (votes, decisions, timers, standing rules), sharing the request's state snippets (lua/includes).
// With APPROVAL_SHARDS > 1 a request lives in the shard of its request ID (core/approval-keys.ts): everything about one
// request is one shard's, and the lists (list, newest, recent, count) are read from every shard and merged.
import {
  APPROVAL_LIST_ORDER,
  type ApprovalCursor,
  type ApprovalStatus,
  type DecidedBy,
} from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import { trustField, type ApprovalKeys, type ApprovalShard } from '../core/approval-keys';
import type { ApprovalPage, ListOptions, NewApproval, StoredApproval } from './approval-types';
import { parseStored, RequestField, storedAsCreated } from './request-codec';

const SCRIPTS = {
  create: LuaScript.load(__dirname, 'create-request-7.lua'),
  readPage: LuaScript.load(__dirname, 'read-page-1.lua'),
};

export class RequestStore {
  constructor(
    private readonly redis: RedisClient,
    readonly keys: ApprovalKeys,
    /** How long a settled call stays readable. */
    private readonly retentionMs: number,
    /**
     * How long after a request is settled its decision may stay unpublished before the timer sweep publishes it
     * (the settling replica is presumed dead).
     */
    private readonly publishCheckMs: number,
  ) {}

  /**
   * Stores a request; `created: false` means this request was already stored (a redelivery), else `stored` is the
   * request as stored (pending or a notice). A stored pending request or notice is announced on the live-update channel by the same script.
   */
  async create(
    input: NewApproval,
    /** The requester's trust count as read by trustCount, when the caller read it beside other work. */
    trust?: Promise<number>,
  ): Promise<{ created: boolean; trustCount: number; status: string; stored?: StoredApproval }> {
    const { request: r, refusal } = input;
    const shard = this.keys.shardOf(r.requestId);
    const escalation = input.status === 'pending' ? input.escalation : undefined;
    const trustCount = await (trust ?? this.trustCount(r.requester, r.toolName));
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
    if (reply[0] === 1) {
      const { status } = input;
      const stored = status === 'decided' ? undefined : storedAsCreated({ ...input, status }, trustCount);
      return { created: true, trustCount, status: input.status, stored };
    }
    return { created: false, trustCount: 0, status: String(reply[1]) };
  }

  /**
   * How many times in a row `requester`'s calls of `toolName` were approved as asked, stored with a new request. The
   * trust counters are every requester's, not one request's (they live under the home tag), so they are read here,
   * not by the script that stores the request.
   */
  async trustCount(requester: string, toolName: string): Promise<number> {
    return Number((await this.redis.hget(this.keys.trust, trustField(requester, toolName))) ?? 0);
  }

  /**
   * The call ID of a request and the groups it is routed to now (escalation included); '' and [] for an unknown
   * request. One HMGET.
   */
  async routeOf(requestId: string): Promise<{ callId: string; groups: string[] }> {
    const [callId, groups] = await this.redis.hmget(
      this.keys.request(requestId),
      RequestField.callId,
      RequestField.groups,
    );
    return { callId: callId ?? '', groups: groups ? groups.split(',') : [] };
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

// The encoded argument of create-request-7.lua (ARGV[1], a JSON object): the names its header lists.
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

// The due-timer sets of the approval state (one per shard), as the sweep sees them: claim what is due under a lease,
// remove what was handled. The request scripts (create, vote, expire, mark published) add, move and remove the
// members, each in its request's shard.
import { LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys, ApprovalShard } from '../core/approval-keys';
import { RequestField } from '../requests/request-codec';
import { parseTimerMember, timerMember, type TimerRef } from './timer-member';

const SCRIPTS = {
  claim: LuaScript.load(__dirname, 'claim-due-timers-1.lua'),
  finish: LuaScript.load(__dirname, 'finish-timers-1.lua'),
};

/** A claimed member; `timer` is undefined for a member this service cannot read (it is removed unrun). */
export interface ClaimedTimer {
  member: string;
  timer?: TimerRef;
}

export interface Claim {
  /** The shard whose timers these are (its index in ApprovalKeys.shards). */
  shard: number;
  /** The score every claimed member was given (now + lease); finish() removes only members still there. */
  claimedScore: number;
  timers: ClaimedTimer[];
}

const ADOPT_BATCH = 500;

export class DueTimers {
  constructor(
    private readonly redis: RedisClient,
    readonly keys: ApprovalKeys,
  ) {}

  /** Takes up to `limit` due timers of one shard for `leaseMs`: no other sweep gets them until the lease runs out. */
  async claim(shard: ApprovalShard, now: number, leaseMs: number, limit: number): Promise<Claim> {
    const [score, ...members] = (await SCRIPTS.claim.run(
      this.redis,
      [shard.timers],
      [now, leaseMs, limit],
    )) as [number, ...string[]];
    return {
      shard: shard.index,
      claimedScore: Number(score),
      timers: members.map((member) => ({ member, timer: parseTimerMember(member) })),
    };
  }

  /** Removes handled members of a claim that still carry its score; returns how many went. */
  async finish(claim: Claim, handled: ClaimedTimer[]): Promise<number> {
    if (handled.length === 0) return 0;
    const members = handled.map((t) => t.member);
    const shard = this.keys.shards[claim.shard];
    return Number(await SCRIPTS.finish.run(this.redis, [shard.timers], [claim.claimedScore, ...members]));
  }

  /** When a timer is due (ms), or undefined when there is none. */
  async dueAt(timer: TimerRef): Promise<number | undefined> {
    const score = await this.redis.zscore(this.keys.shardOf(timer.requestId).timers, timerMember(timer));
    return score === null ? undefined : Number(score);
  }

  /** Timers in the sets, and how many of them are past due (waiting for a sweep, or for a lease to run out). */
  async counts(now: number): Promise<{ scheduled: number; due: number }> {
    const perShard = await Promise.all(
      this.keys.shards.map((shard) =>
        Promise.all([this.redis.zcard(shard.timers), this.redis.zcount(shard.timers, '-inf', now)]),
      ),
    );
    return {
      scheduled: perShard.reduce((sum, [scheduled]) => sum + scheduled, 0),
      due: perShard.reduce((sum, [, due]) => sum + due, 0),
    };
  }

  /**
   * Gives every open request (pending or notice) an expiry timer if it has none: requests stored by a version
   * that kept its timers as BullMQ delayed jobs would otherwise never expire. New requests get theirs when they
   * are stored, so this finds nothing after the first start. Safe to race: a timer added for a request settled
   * meanwhile finds nothing to do when it runs, and is removed.
   */
  async adoptOpenRequests(): Promise<number> {
    let adopted = 0;
    for (const shard of this.keys.shards) adopted += await this.adoptOpenRequestsOf(shard);
    return adopted;
  }

  private async adoptOpenRequestsOf(shard: ApprovalShard): Promise<number> {
    let adopted = 0;
    for (const set of [shard.pending, shard.notices]) {
      const requestIds = await this.redis.zrange(set, 0, -1);
      for (let i = 0; i < requestIds.length; i += ADOPT_BATCH) {
        const batch = requestIds.slice(i, i + ADOPT_BATCH);
        const fields = await Promise.all(
          batch.map((requestId) =>
            this.redis.hmget(shard.request(requestId), RequestField.attempt, RequestField.expiresAt),
          ),
        );
        const entries: (string | number)[] = [];
        batch.forEach((requestId, j) => {
          const [attempt, expiresAt] = fields[j];
          if (attempt === null || expiresAt === null) return;
          entries.push(
            Number(expiresAt),
            timerMember({ kind: 'expire', requestId, attempt: Number(attempt) }),
          );
        });
        if (entries.length) adopted += await this.redis.zadd(shard.timers, 'NX', ...entries);
      }
    }
    return adopted;
  }
}

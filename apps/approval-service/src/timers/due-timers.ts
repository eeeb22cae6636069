// The due-timer set of the approval state, as the sweep sees it: claim what is due under a lease, remove what
// was handled. The request scripts (create, vote, expire, mark published) add, move and remove the members.
import { LuaScript, type RedisClient } from '@countersign/platform';
import {
  approvalKeys,
  parseTimerMember,
  timerMember,
  type ApprovalKeys,
  type TimerRef,
} from '../approvals/approval-keys';

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
  /** The score every claimed member was given (now + lease); finish() removes only members still there. */
  claimedScore: number;
  timers: ClaimedTimer[];
}

const ADOPT_BATCH = 500;

export class DueTimers {
  readonly keys: ApprovalKeys;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.keys = approvalKeys(keyPrefix);
  }

  /** Takes up to `limit` due timers for `leaseMs`: no other sweep gets them until the lease runs out. */
  async claim(now: number, leaseMs: number, limit: number): Promise<Claim> {
    const [score, ...members] = (await SCRIPTS.claim.run(
      this.redis,
      [this.keys.timers],
      [now, leaseMs, limit],
    )) as [number, ...string[]];
    return {
      claimedScore: Number(score),
      timers: members.map((member) => ({ member, timer: parseTimerMember(member) })),
    };
  }

  /** Removes handled members that still carry this claim's score; returns how many went. */
  async finish(claimedScore: number, members: string[]): Promise<number> {
    if (members.length === 0) return 0;
    return Number(await SCRIPTS.finish.run(this.redis, [this.keys.timers], [claimedScore, ...members]));
  }

  /** When a timer is due (ms), or undefined when there is none. */
  async dueAt(timer: TimerRef): Promise<number | undefined> {
    const score = await this.redis.zscore(this.keys.timers, timerMember(timer));
    return score === null ? undefined : Number(score);
  }

  /** Timers in the set, and how many of them are past due (waiting for a sweep, or for a lease to run out). */
  async counts(now: number): Promise<{ scheduled: number; due: number }> {
    const [scheduled, due] = await Promise.all([
      this.redis.zcard(this.keys.timers),
      this.redis.zcount(this.keys.timers, '-inf', now),
    ]);
    return { scheduled, due };
  }

  /**
   * Gives every open request (pending or notice) an expiry timer if it has none: requests stored by a version
   * that kept its timers as BullMQ delayed jobs would otherwise never expire. New requests get theirs when they
   * are stored, so this finds nothing after the first start. Safe to race: a timer added for a request settled
   * meanwhile finds nothing to do when it runs, and is removed.
   */
  async adoptOpenRequests(): Promise<number> {
    let adopted = 0;
    for (const set of [this.keys.pending, this.keys.notices]) {
      const requestIds = await this.redis.zrange(set, 0, -1);
      for (let i = 0; i < requestIds.length; i += ADOPT_BATCH) {
        const batch = requestIds.slice(i, i + ADOPT_BATCH);
        const fields = await Promise.all(
          batch.map((requestId) => this.redis.hmget(this.keys.request(requestId), 'attempt', 'expiresAt')),
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
        if (entries.length) adopted += await this.redis.zadd(this.keys.timers, 'NX', ...entries);
      }
    }
    return adopted;
  }
}

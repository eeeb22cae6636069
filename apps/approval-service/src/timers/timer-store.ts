// What a due timer does to its request in Redis: expire it (deny a pending request, retire a notice) or escalate it
// (add the escalation groups), each one script on the request's hash, compare-and-set, so a retried timer changes
// nothing twice.
import type { ApprovalRequest } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import { parseRequest } from '../requests/request-codec';

const SCRIPTS = {
  expire: LuaScript.load(__dirname, 'expire-request-5.lua'),
  escalate: LuaScript.load(__dirname, 'escalate-request-1.lua'),
};

/** `notDueFor`: the timer ran early and was moved back to the expiry. */
export type ExpireResult =
  { expired: ApprovalRequest } | 'notice_retired' | { notDueFor: number } | { nothingToDo: string };

/** `escalated`: the groups were added now; `again`: an earlier run of the timer added them; `no`: not pending. */
export type EscalateResult = { status: 'escalated' | 'again'; groups: string[] } | { status: 'no' };

export class TimerStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
    /** How long a settled call stays readable. */
    private readonly retentionMs: number,
    /** How long a settled request's decision may stay unpublished before the timer sweep publishes it. */
    private readonly publishCheckMs: number,
  ) {}

  /** Denies a pending request that is due (`expired`), retires a due notice, or says why it did neither. */
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

  /** Adds the escalation groups stored with the request, if it is still pending. */
  async escalate(requestId: string, attempt: number): Promise<EscalateResult> {
    const reply = (await SCRIPTS.escalate.run(this.redis, [this.keys.request(requestId)], [attempt])) as [
      number,
      string?,
    ];
    if (reply[0] === 0) return { status: 'no' };
    return { status: reply[0] === 1 ? 'escalated' : 'again', groups: String(reply[1]).split(',') };
  }
}

// The encoded argument of expire-request-5.lua (ARGV[1], a JSON object): the names its header lists.
type ExpireRequestArgs = {
  attempt: number;
  now: number;
  nowIso: string;
  retentionMs: number;
  publishCheckMs: number;
};

// What the approvals API keeps beyond a request's approval state: the index from a client's call to its approval
// ID, and the claim and completion of an approved call, stored in the approval's own hash (so they age out with it).
import { createHash } from 'node:crypto';
import { LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../approvals/approval-keys';
import { parseStored, type StoredApproval } from '../approvals/approval-store';
import { externalRefusal } from './external-errors';

const SCRIPTS = {
  reserveId: LuaScript.load(__dirname, 'reserve-approval-id-1.lua'),
  claim: LuaScript.load(__dirname, 'claim-call-1.lua'),
  complete: LuaScript.load(__dirname, 'complete-call-1.lua'),
};

/**
 * One client's call, as the index knows it: submitting it again must find the same approval. The requester is part of
 * it: the same run, call ID and arguments submitted for another person are another call, with an approval of its own.
 */
export interface ExternalCallRef {
  principal: string;
  /** Whom the call is for: the person the client acts for, or the client itself. */
  requester: string;
  runId: string;
  callId: string;
  fingerprint: string;
}

export interface ClaimState {
  claimedAt: string;
  claimedBy: string;
  completion?: { outcome: 'ok' | 'error'; summary?: string; at: string };
}

export interface StoredExternalApproval extends StoredApproval {
  claim?: ClaimState;
}

export class ExternalCallStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
  ) {}

  /**
   * The approval ID of the call: the one stored for it, or `candidate`, reserved now for `ttlMs` (`reserved`: the
   * caller is the first to submit this call).
   */
  async reserveId(
    call: ExternalCallRef,
    candidate: string,
    ttlMs: number,
  ): Promise<{ approvalId: string; reserved: boolean }> {
    const reply = (await SCRIPTS.reserveId.run(
      this.redis,
      [this.keys.externalIndex(indexDigest(call))],
      [candidate, Math.ceil(ttlMs)],
    )) as [number, string];
    return { approvalId: String(reply[1]), reserved: reply[0] === 1 };
  }

  async get(approvalId: string): Promise<StoredExternalApproval | undefined> {
    const hash = await this.redis.hgetall(this.keys.request(approvalId));
    const stored = parseStored(hash);
    if (!stored) return undefined;
    if (!hash.claimedAt) return stored;
    return {
      ...stored,
      claim: {
        claimedAt: hash.claimedAt,
        claimedBy: hash.claimedBy,
        completion: hash.completionOutcome
          ? {
              outcome: hash.completionOutcome as 'ok' | 'error',
              summary: hash.completionSummary || undefined,
              at: hash.completedAt,
            }
          : undefined,
      },
    };
  }

  /** Claims the approved call for `principal`; throws ExternalCallRefusedError when it may not be run. */
  async claim(approvalId: string, principal: string, now = Date.now()): Promise<string> {
    const at = new Date(now).toISOString();
    const reply = (await SCRIPTS.claim.run(
      this.redis,
      [this.keys.request(approvalId)],
      [principal, now, at],
    )) as (string | number)[];
    if (reply[0] !== 1) throw externalRefusal(reply, approvalId);
    return at;
  }

  /** Records the outcome of a claimed call, once; throws ExternalCallRefusedError otherwise. */
  async complete(
    approvalId: string,
    report: { outcome: 'ok' | 'error'; summary?: string },
    now = Date.now(),
  ): Promise<string> {
    const at = new Date(now).toISOString();
    const reply = (await SCRIPTS.complete.run(
      this.redis,
      [this.keys.request(approvalId)],
      [report.outcome, report.summary ?? '', at],
    )) as (string | number)[];
    if (reply[0] !== 1) throw externalRefusal(reply, approvalId);
    return at;
  }
}

/** The index entry's name: the five parts as a JSON array (unambiguous whatever they hold), hashed. */
export function indexDigest(call: ExternalCallRef): string {
  return createHash('sha256')
    .update(JSON.stringify([call.principal, call.requester, call.runId, call.callId, call.fingerprint]))
    .digest('hex');
}

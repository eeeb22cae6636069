// What the approvals API keeps beyond a request's approval state: the index from a client's call to its approval
// ID, and the approved call itself on the call ledger (claimed once, completed once, by its client), kept in the
// approval's own hash under the prefix `call:` (so it ages out with it).
import { createHash } from 'node:crypto';
import { CallState, ledgerFields } from '@countersign/call-ledger';
import { LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import type { StoredApproval } from '../requests/approval-types';
import { parseStored } from '../requests/request-codec';
import { externalRefusal } from './external-errors';

const SCRIPTS = {
  reserveId: LuaScript.load(__dirname, 'reserve-approval-id-1.lua'),
  claim: LuaScript.load(__dirname, 'claim-external-call-1.lua'),
  complete: LuaScript.load(__dirname, 'complete-external-call-1.lua'),
};

/** The call's ledger fields in the approval's hash (the scripts' prefix "call:"). */
const CALL = ledgerFields('call:');

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

/** How running a claimed call went, as its client reported it: the call's result on the ledger. */
export interface Completion {
  outcome: 'ok' | 'error';
  summary?: string;
  at: string;
}

export interface ClaimState {
  claimedAt: string;
  completion?: Completion;
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
    const claim = parseClaim(hash);
    return claim ? { ...stored, claim } : stored;
  }

  /**
   * Claims the approved call for `principal` (the ledger's execution token: only it completes the call); throws
   * ExternalCallRefusedError when it may not be run.
   */
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

  /** Records the outcome of a call `principal` claimed, once; throws ExternalCallRefusedError otherwise. */
  async complete(
    approvalId: string,
    principal: string,
    report: { outcome: 'ok' | 'error'; summary?: string },
    now = Date.now(),
  ): Promise<string> {
    const at = new Date(now).toISOString();
    const result: Completion = { outcome: report.outcome, summary: report.summary || undefined, at };
    const reply = (await SCRIPTS.complete.run(
      this.redis,
      [this.keys.request(approvalId)],
      [principal, JSON.stringify(result)],
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

/** The claim of an approval's call, when it was claimed; with its completion once the ledger has the call done. */
function parseClaim(hash: Record<string, string>): ClaimState | undefined {
  if (!hash.claimedAt) return undefined;
  const done = hash[CALL.state] === CallState.Done && hash[CALL.result];
  return {
    claimedAt: hash.claimedAt,
    ...(done ? { completion: JSON.parse(hash[CALL.result]) as Completion } : {}),
  };
}

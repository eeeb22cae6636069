// The gateway's durable memory of confirm-tier calls, in Redis: identical calls (one principal, one tool, one
// fingerprint) share a record, so they share one approval and, once it ran, its one result, across requests, gateway
// restarts and replicas. The record's call state is the call ledger's (libs/call-ledger, one call per hash, prefix
// ""); every transition is a script over the record's one key (see lua/) that moves it with the ledger's functions.
import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type CallState, isCallState, ledgerFields } from '@countersign/call-ledger';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';

const SCRIPTS = {
  open: LuaScript.load(__dirname, 'open-call-1.lua'),
  recordApproval: LuaScript.load(__dirname, 'record-approval-1.lua'),
  startRun: LuaScript.load(__dirname, 'start-run-1.lua'),
  settle: LuaScript.load(__dirname, 'settle-call-1.lua'),
};

/** The gateway's keys: one hash tag, so every script works on Redis Cluster. */
export function gatewayKeys(keyPrefix: string) {
  const tag = `{${keyPrefix}:gateway}`;
  return {
    /** A principal's calls of one tool with one fingerprint (which covers the tool's name and the arguments). */
    call: (principal: string, fingerprint: string) =>
      `${tag}:call:${createHash('sha256')
        .update(JSON.stringify([principal, fingerprint]))
        .digest('hex')}`,
  };
}

/** The record holds one call: the ledger's fields without a prefix. */
const LEDGER = ledgerFields('');

export interface CallRecord {
  key: string;
  /** The call ID the approvals API knows the call by (with the gateway's principal and `runId`). */
  callId: string;
  runId: string;
  definitionHash: string;
  state: CallState;
  approvalId?: string;
  expiresAt?: string;
  inboxUrl?: string;
  /** The outcome (a settled state, `done` or `refused`): what every identical call gets. */
  result?: CallToolResult;
}

export type StartRun = { started: true } | { started: false; state: CallState | 'gone' };
/** Whether an outcome was stored, and if not, the state the record's call was found in. */
export type Settle = { settled: true } | { settled: false; found: CallState | 'gone' };

export class CallRecordStore {
  private readonly keys: ReturnType<typeof gatewayKeys>;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.keys = gatewayKeys(keyPrefix);
  }

  keyOf(principal: string, fingerprint: string): string {
    return this.keys.call(principal, fingerprint);
  }

  /** The record identical calls share, or a new one (`created`). See open-call-1.lua. */
  async open(
    key: string,
    fresh: { callId: string; runId: string; definitionHash: string; ttlMs: number; replace?: string },
  ): Promise<{ record: CallRecord; created: boolean }> {
    const reply = (await SCRIPTS.open.run(this.redis, [key], [encodeScriptArgs(fresh)])) as (
      number | string
    )[];
    return { created: reply[0] === 1, record: parseRecord(key, reply.slice(1) as string[]) };
  }

  async get(key: string): Promise<CallRecord | undefined> {
    const hash = await this.redis.hgetall(key);
    if (!hash.callId) return undefined;
    return parseRecord(key, Object.entries(hash).flat());
  }

  /** False when the record started over (or is gone) meanwhile. */
  async recordApproval(
    record: CallRecord,
    approval: { approvalId: string; expiresAt: string; inboxUrl: string },
    ttlMs: number,
  ): Promise<boolean> {
    const args = encodeScriptArgs({ callId: record.callId, ...approval, ttlMs: Math.ceil(ttlMs) });
    return (await SCRIPTS.recordApproval.run(this.redis, [record.key], [args])) === 1;
  }

  /**
   * Claims the approved call for one runner under `token` (the ledger's claim), taking over a runner whose heartbeat is
   * older than `staleAfterMs`. See start-run-1.lua.
   */
  async startRun(record: CallRecord, token: string, staleAfterMs: number): Promise<StartRun> {
    const args = encodeScriptArgs({ callId: record.callId, token, staleAfterMs: Math.ceil(staleAfterMs) });
    const reply = (await SCRIPTS.startRun.run(this.redis, [record.key], [args])) as (number | string)[];
    if (reply[0] === 1) return { started: true };
    return { started: false, state: reply[0] === -1 ? 'gone' : callState(reply[1]) };
  }

  /**
   * Ends the run `token` claimed: `done` (it ran, or may have) or `refused` (the approval no longer held). False when
   * it was not stored: another runner took the run over, or it was settled already (see settle-call-1.lua).
   */
  async complete(
    record: CallRecord,
    token: string,
    outcome: { state: 'done' | 'refused'; result: CallToolResult; ttlMs: number },
  ): Promise<Settle> {
    return this.settle(record, { ...outcome, token });
  }

  /** A decision refused the call before it ran: its refusal is the outcome. */
  async refuse(record: CallRecord, outcome: { result: CallToolResult; ttlMs: number }): Promise<Settle> {
    return this.settle(record, outcome);
  }

  private async settle(
    record: CallRecord,
    outcome: { result: CallToolResult; ttlMs: number; token?: string; state?: 'done' | 'refused' },
  ): Promise<Settle> {
    const args = encodeScriptArgs({
      callId: record.callId,
      result: JSON.stringify(outcome.result),
      ttlMs: Math.ceil(outcome.ttlMs),
      token: outcome.token,
      state: outcome.state,
    });
    const reply = (await SCRIPTS.settle.run(this.redis, [record.key], [args])) as (number | string)[];
    return reply[0] === 1
      ? { settled: true }
      : { settled: false, found: reply[1] ? callState(reply[1]) : 'gone' };
  }
}

function parseRecord(key: string, flat: string[]): CallRecord {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return {
    key,
    callId: hash.callId,
    runId: hash.runId,
    definitionHash: hash.definitionHash,
    state: callState(hash[LEDGER.state]),
    approvalId: hash.approvalId || undefined,
    expiresAt: hash.expiresAt || undefined,
    inboxUrl: hash.inboxUrl || undefined,
    result: hash[LEDGER.result] ? (JSON.parse(hash[LEDGER.result]) as CallToolResult) : undefined,
  };
}

/** A state only the ledger's functions write; anything else means the record is not what this code wrote. */
function callState(value: unknown): CallState {
  if (!isCallState(value))
    throw new Error(`a gateway call record holds an unknown call state: ${String(value)}`);
  return value;
}

// The gateway's durable memory of confirm-tier calls, in Redis: identical calls (one principal, one tool, one
// fingerprint) share a record, so they share one approval and, once it ran, its one result, across requests, gateway
// restarts and replicas. Every transition is a script over the record's one key (see lua/).
import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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

export type CallState = 'pending' | 'running' | 'done' | 'refused';

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
  /** The outcome (state `done` or `refused`): what every identical call gets. */
  result?: CallToolResult;
}

export type StartRun = { started: true } | { started: false; state: CallState | 'gone' };

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

  async startRun(record: CallRecord, runner: string, leaseMs: number): Promise<StartRun> {
    const args = encodeScriptArgs({ callId: record.callId, runner, leaseMs: Math.ceil(leaseMs) });
    const reply = (await SCRIPTS.startRun.run(this.redis, [record.key], [args])) as (number | string)[];
    if (reply[0] === 1) return { started: true };
    return { started: false, state: reply[0] === -1 ? 'gone' : (reply[1] as CallState) };
  }

  /** Stores the outcome once; false when it was not stored (see settle-call-1.lua). */
  async settle(
    record: CallRecord,
    outcome: { state: 'done' | 'refused'; result: CallToolResult; ttlMs: number; runner?: string },
  ): Promise<boolean> {
    const args = encodeScriptArgs({
      callId: record.callId,
      state: outcome.state,
      result: JSON.stringify(outcome.result),
      ttlMs: Math.ceil(outcome.ttlMs),
      runner: outcome.runner,
    });
    return (await SCRIPTS.settle.run(this.redis, [record.key], [args])) === 1;
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
    state: hash.state as CallState,
    approvalId: hash.approvalId || undefined,
    expiresAt: hash.expiresAt || undefined,
    inboxUrl: hash.inboxUrl || undefined,
    result: hash.result ? (JSON.parse(hash.result) as CallToolResult) : undefined,
  };
}

// Redis keys of approval state. One hash tag for all of them: the scripts touch several at once (Redis Cluster).

export function approvalKeys(keyPrefix: string) {
  const tag = `{${keyPrefix}:approvals}`;
  return {
    call: (callId: string) => `${tag}:call:${callId}`,
    pending: `${tag}:pending`,
    notices: `${tag}:notices`,
    decided: `${tag}:decided`,
    expired: `${tag}:expired`,
    trust: `${tag}:trust`,
    /** Due timers (zset): member `<kind>|<callId>|<attempt>`, score = when it is due (ms). See timerMember. */
    timers: `${tag}:timers`,
    /** Marks a spent email-link token (by hash). */
    usedToken: (tokenHash: string) => `${tag}:used:${tokenHash}`,
    /** Remembers a Slack request signature for the replay window. */
    seenSlackSignature: (signature: string) => `${tag}:slack-seen:${signature}`,
    /** A one-time inbox sign-in code (by hash) → the principal it signs in. */
    signInCode: (codeHash: string) => `${tag}:sign-in:${codeHash}`,
    /** Standing rules (hash: rule ID → rule JSON); read on every request, so a revoke stops a rule at once. */
    standingRules: `${tag}:standing-rules`,
    /** Pub/sub channel of changes, so every replica's inbox sees every change. */
    changes: `${keyPrefix}:approvals:changes`,
  };
}
export type ApprovalKeys = ReturnType<typeof approvalKeys>;

/** The trust counter of one tool for one requester (IDs and tool names never contain '|'). */
export const trustField = (requester: string, toolName: string) => `${requester}|${toolName}`;

/**
 * What a due timer does when its time comes: `expire` denies a pending request (or retires a notice) and, once
 * the request is settled, stays as the check that its decision was published; `escalate` adds the escalation
 * groups. The Lua scripts build the same member strings (`kind .. '|' .. callId .. '|' .. attempt`).
 */
export type TimerKind = 'expire' | 'escalate';

export interface TimerRef {
  kind: TimerKind;
  callId: string;
  attempt: number;
}

/** The sorted-set member of a timer (call IDs never contain '|'). */
export const timerMember = ({ kind, callId, attempt }: TimerRef) => `${kind}|${callId}|${attempt}`;

/** The timer a member stands for; undefined for a member no version of this service writes. */
export function parseTimerMember(member: string): TimerRef | undefined {
  const match = /^(expire|escalate)\|([^|]+)\|(\d+)$/.exec(member);
  return match ? { kind: match[1] as TimerKind, callId: match[2], attempt: Number(match[3]) } : undefined;
}

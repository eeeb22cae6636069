// Redis keys of approval state. One hash tag for all of them: the scripts touch several at once (Redis Cluster).
// A request's state is keyed by its request ID: two runs that use one call ID, or a later turn that reuses one,
// never share a request. The lists (pending, notices, decided, expired) and the timers hold request IDs.

export function approvalKeys(keyPrefix: string) {
  const tag = `{${keyPrefix}:approvals}`;
  return {
    request: (requestId: string) => `${tag}:request:${requestId}`,
    /**
     * The request IDs stored for one call ID (a set), so `/approvals/<callId>` finds its request when the call ID names
     * one (see ApprovalsService.resolve). Expires after the last of them could still be read.
     */
    callRequests: (callId: string) => `${tag}:call-requests:${callId}`,
    /**
     * External approvals: the approval ID (their request ID) of one (client, run, call ID, fingerprint), by the
     * SHA-256 of those four (see external-index-key.ts), so a client submitting the same call again finds its approval.
     */
    externalIndex: (digest: string) => `${tag}:external:${digest}`,
    pending: `${tag}:pending`,
    notices: `${tag}:notices`,
    decided: `${tag}:decided`,
    expired: `${tag}:expired`,
    trust: `${tag}:trust`,
    /** Due timers (zset): member `<kind>|<requestId>|<attempt>`, score = when it is due (ms). See timerMember. */
    timers: `${tag}:timers`,
    /** Marks a spent email-link token (by hash). */
    usedToken: (tokenHash: string) => `${tag}:used:${tokenHash}`,
    /** Remembers a Slack request signature for the replay window. */
    seenSlackSignature: (signature: string) => `${tag}:slack-seen:${signature}`,
    /** One requester's notification window (NOTIFY_DIGEST_WINDOW): counts, targets and digests (DigestStore). */
    digestWindow: (requester: string, windowStart: number) => `${tag}:digest:${requester}:${windowStart}`,
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
 * groups. The Lua scripts build the same member strings (`kind .. '|' .. requestId .. '|' .. attempt`).
 */
export type TimerKind = 'expire' | 'escalate';

export interface TimerRef {
  kind: TimerKind;
  requestId: string;
  attempt: number;
}

/** The sorted-set member of a timer (IDs never contain '|'). */
export const timerMember = ({ kind, requestId, attempt }: TimerRef) => `${kind}|${requestId}|${attempt}`;

/** The timer a member stands for; undefined for a member no version of this service writes. */
export function parseTimerMember(member: string): TimerRef | undefined {
  const match = /^(expire|escalate)\|([^|]+)\|(\d+)$/.exec(member);
  return match ? { kind: match[1] as TimerKind, requestId: match[2], attempt: Number(match[3]) } : undefined;
}

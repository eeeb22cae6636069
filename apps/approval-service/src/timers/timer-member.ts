// The due-timer set's members: which timer of which request attempt, as the request scripts write them
// (requests/lua/includes/timer-member.lua builds the same strings).

/**
 * What a due timer does when its time comes: `expire` denies a pending request (or retires a notice) and, once
 * the request is settled, stays as the check that its decision was published; `escalate` adds the escalation
 * groups.
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

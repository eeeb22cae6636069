// The outcomes nobody votes for: a request no route takes is denied at once, one nobody decided in time expires.
import type { Outcome } from '../requests/approval-types';

export const NO_ROUTE_REASON = 'no approver route';
export const EXPIRED_REASON = 'expired';

export function noRouteOutcome(now: number): Outcome {
  return {
    decision: 'deny',
    decidedBy: 'no_route',
    approvers: [],
    reason: NO_ROUTE_REASON,
    decidedAt: new Date(now).toISOString(),
  };
}

export function expiredOutcome(now: number): Outcome {
  return {
    decision: 'deny',
    decidedBy: 'expired',
    approvers: [],
    reason: EXPIRED_REASON,
    decidedAt: new Date(now).toISOString(),
  };
}

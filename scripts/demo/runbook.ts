// The demo's scenario: the payments-failover runbook (config/runbooks/payments-failover.yaml), what the approver
// stand-in decides, and what must come out.

/** Who starts the run: its requester (RBAC applies to them; they may never approve it). */
export const REQUESTER = 'alice';

/** check → restart and scale in parallel → a gate → the manual-only delete. */
export const RUNBOOK = {
  name: 'payments-failover',
  input: { service: 'payments', replicas: 6, volume: 'scratch' },
};

export interface StandInDecision {
  decision: 'approve' | 'deny';
  reason?: string;
}

/** What the approver stand-in (non-interactive mode) decides, by tool. */
export const STAND_IN_DECISIONS: Record<string, StandInDecision> = {
  restart_service: {
    decision: 'approve',
    reason: 'payments is degraded; a rolling restart is the runbook step',
  },
  scale_service: {
    decision: 'deny',
    reason: 'no capacity changes during the incident; scale after the review',
  },
  runbook_gate: {
    decision: 'approve',
    reason: 'payments is back; free the scratch volume',
  },
};

/**
 * The summary the non-interactive demo must end with (tool names per section, in run order): the check, the
 * restart (its parallel sibling, the scale, was refused and its denied edge re-checks the service), the gate.
 */
export const EXPECTED_SUMMARY = {
  ran: ['get_service_status', 'restart_service', 'get_service_status', 'runbook_gate'],
  refused: ['scale_service'],
  needsPerson: ['delete_volume'],
};

// The demo's runbook for the scripted `ops` agent, what the approver stand-in decides, and what must come out.
import type { StartRunBody } from '@countersign/contracts';

/** Who starts the run: its requester (RBAC applies to them; they may never approve it). */
export const REQUESTER = 'alice';

export const RUNBOOK: StartRunBody = {
  agent: 'ops',
  input: 'payments is degraded: check it, restart it, add capacity, and free its scratch volume',
  script: [
    { toolCalls: [{ name: 'get_service_status', args: { service: 'payments' } }] },
    { toolCalls: [{ name: 'restart_service', args: { service: 'payments' } }] },
    { toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 6 } }] },
    { toolCalls: [{ name: 'delete_volume', args: { volume: 'scratch' } }] },
    { text: 'Runbook finished: see above what ran, what was refused and what needs a person.' },
  ],
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
};

/** The summary the non-interactive demo must end with (tool names per section, in run order). */
export const EXPECTED_SUMMARY = {
  ran: ['get_service_status', 'restart_service'],
  refused: ['scale_service'],
  needsPerson: ['delete_volume'],
};

// Test fixture: an approval request as the unit specs of routing and of the approvers' texts read it (fixed IDs,
// fingerprints and time, no clock), so a spec says only what it changes.
import type { ApprovalRequest } from '@countersign/contracts';

export const approvalRequest = (over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  requestId: 'rq-1',
  callId: 'call-1',
  runId: 'run-1',
  agent: 'ops',
  requester: 'alice',
  toolName: 'restart_service',
  toolDescription: '',
  args: { service: 'payments-api', replicas: 3, target: { region: 'eu-1' } },
  tier: 'confirm',
  fingerprint: 'a'.repeat(64),
  toolDefinitionHash: 'b'.repeat(64),
  reason: 'confirmation_required',
  attempt: 0,
  requestedAt: new Date(0).toISOString(),
  ...over,
});

// An external approval as its client sees it: the decision in the words of the API (allow, deny, respond, pending).
import type { DecisionValue, ExternalApprovalView } from '@countersign/contracts';
import type { StoredExternalApproval } from './external-call-store';

const EXTERNAL_STATUS = { approve: 'allow', deny: 'deny', respond: 'respond' } as const satisfies Record<
  DecisionValue,
  ExternalApprovalView['status']
>;

export function externalView(stored: StoredExternalApproval, publicUrl: string): ExternalApprovalView {
  const { request, outcome, claim } = stored;
  const origin = request.external;
  // Only requests of the approvals API are read through it (ExternalApprovalsService.owned checks this first).
  if (!origin) throw new TypeError(`approval ${request.callId} was not submitted through the approvals API`);
  const settled = stored.status !== 'pending' && stored.status !== 'notice' && outcome !== undefined;
  return {
    approvalId: request.callId,
    status: settled ? EXTERNAL_STATUS[outcome.decision] : 'pending',
    decidedBy: settled ? outcome.decidedBy : undefined,
    reason: settled ? outcome.reason : undefined,
    ...(settled && outcome.response ? { response: outcome.response } : {}),
    approvers: settled ? outcome.approvers : undefined,
    decidedAt: settled ? outcome.decidedAt : undefined,
    runId: request.runId,
    callId: origin.callId,
    toolName: request.toolName,
    requester: request.requester,
    client: origin.principal,
    fingerprint: request.fingerprint,
    expiresAt: new Date(stored.expiresAt).toISOString(),
    inboxUrl: `${publicUrl}/inbox#${request.callId}`,
    claim: claim && { claimedAt: claim.claimedAt, completion: claim.completion },
  };
}

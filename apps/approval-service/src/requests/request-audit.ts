// The audit entry of a request taken in (request.created, or request.notice for a manual step): who asked for what,
// and `detail` adds where it went (its route, the standing rule that decided it, where it was submitted).
import type { AuditInput } from '@countersign/audit';
import type { ApprovalRequest } from '@countersign/contracts';

export function requestTakenIn(
  type: 'request.created' | 'request.notice',
  request: ApprovalRequest,
  detail: Record<string, unknown>,
): AuditInput {
  const { toolName, tier, agent, attempt, requestId } = request;
  return {
    type,
    runId: request.runId,
    callId: request.callId,
    actor: request.requester,
    detail: { toolName, tier, agent, attempt, requestId, ...detail },
  };
}

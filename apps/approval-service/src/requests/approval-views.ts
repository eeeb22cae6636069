// A request as the REST API shows it (ApprovalView), and the trust suggestion every channel shows beside a request.
import type { ApprovalView } from '@countersign/contracts';
import type { StoredApproval } from './approval-types';

/** Consecutive approvals after which approvers are told to consider promoting the tool to auto. */
export const TRUST_THRESHOLD = 5;

export function trustSuggestion(
  approval: Pick<StoredApproval, 'trustCount' | 'request'>,
): string | undefined {
  if (approval.trustCount < TRUST_THRESHOLD) return undefined;
  const { toolName, requester } = approval.request;
  return `${approval.trustCount} approvals in a row of ${toolName} for ${requester}: consider a standing rule, so its next calls are approved by policy for a while`;
}

export function toView(approval: StoredApproval): ApprovalView {
  return {
    request: approval.request,
    status: approval.status,
    groups: approval.groups,
    quorum: approval.quorum,
    expiresAt: new Date(approval.expiresAt).toISOString(),
    votes: approval.votes,
    outcome: approval.outcome,
    trustSuggestion: trustSuggestion(approval),
    ...(approval.route ? { route: approval.route } : {}),
    ...(approval.edited ? { edited: approval.edited } : {}),
    ...(approval.setAside.length > 0 ? { setAside: approval.setAside } : {}),
    ...(approval.done ? { done: approval.done } : {}),
    ...(approval.tool
      ? {
          tool: {
            description: approval.tool.description,
            tier: approval.tool.tier,
            argsSchema: approval.tool.argsSchema,
          },
        }
      : {}),
  };
}

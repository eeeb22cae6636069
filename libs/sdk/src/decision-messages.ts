// What an agent's model is told when Countersign did not approve a call, worded like the worker's refusals, so the
// model can tell a person's denial (with the reason) from an expiry and from a missing approver route.
import { responseMessage } from '@countersign/authorization/decisions';
import type { ExternalApprovalView } from '@countersign/contracts/external-approvals.schema';
import type { GuardResult } from './guard';

export function refusalMessage(
  view: Pick<ExternalApprovalView, 'decidedBy' | 'reason' | 'approvers'>,
): string {
  if (view.decidedBy === 'expired')
    return 'Tool execution was not approved in time: the approval request expired.';
  if (view.decidedBy === 'no_route') return 'Tool execution was denied: no approver route.';
  const who = view.approvers?.length ? view.approvers.join(', ') : 'the user';
  return `Tool execution was denied by ${who}.${view.reason ? ` Reason: ${view.reason}` : ''}`;
}

/**
 * An approver responded with text instead of a verdict (status `respond`): the call did not run, and the model is
 * given their words, marked as theirs and naming who, worded as the worker words it.
 */
export function respondedMessage(
  toolName: string,
  view: Pick<ExternalApprovalView, 'response' | 'approvers'>,
): string {
  return responseMessage(toolName, view);
}

/** What the model is told about a decided call that is not run: refused, or answered with a response. */
export function notApprovedMessage(
  toolName: string,
  view: Pick<ExternalApprovalView, 'status' | 'decidedBy' | 'reason' | 'approvers' | 'response'>,
): string {
  return view.status === 'respond' ? respondedMessage(toolName, view) : refusalMessage(view);
}

/** The tool result of a guarded call that did not run here. */
export function notRunMessage(result: Exclude<GuardResult<unknown>, { status: 'executed' }>): string {
  switch (result.status) {
    case 'denied':
      return refusalMessage({
        decidedBy: result.decidedBy as ExternalApprovalView['decidedBy'],
        reason: result.reason,
      });
    case 'responded':
      return respondedMessage(result.toolName, result);
    case 'expired':
      return refusalMessage({ decidedBy: 'expired' });
    case 'pending':
      return `Tool execution is waiting for approval (Countersign approval ${result.approvalId}); it was not run.`;
    case 'already_claimed':
      return 'This tool call was already run (its approval was used); it was not run again.';
  }
}

/** The model's arguments changed after they were approved: never run, whatever the history or stored state says. */
export const CHANGED_AFTER_APPROVAL =
  'Tool execution was refused: the call does not match what was approved (its arguments changed after approval).';

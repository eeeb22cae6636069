// How the CLI and the demo print calls, events and approvals: one line per thing, arguments as compact JSON.
import type { ApprovalView, PendingCall, RunEvent } from '@countersign/contracts';

export function compact(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export const callText = (call: { toolName: string; args: unknown }) =>
  `${call.toolName} ${compact(call.args)}`;

const OUTCOME_MARK: Record<string, string> = {
  executed: '✓',
  denied: '✗',
  manual_required: '⚠',
};

/** One line for an event of the run's stream; `undefined` for events not worth a line. */
export function eventLine(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'status':
      return `… run is ${event.status}`;
    case 'tool_confirmation':
      return `⏸ ${confirmationText(event.call)}`;
    case 'tool_result':
      return `${OUTCOME_MARK[event.outcome] ?? '•'} ${event.toolName} (${event.callId}) ${event.outcome.replace('_', ' ')}: ${compact(event.content)}`;
    case 'text':
      return `💬 ${event.text}`;
    case 'done':
      return `■ run ${event.status}${event.result ? `: ${event.result}` : ''}`;
  }
}

export function confirmationText(call: PendingCall): string {
  return `${callText(call)} needs confirmation (call ${call.callId}, tier ${call.tier})`;
}

export function approvalLine(view: ApprovalView): string {
  const r = view.request;
  const votes =
    view.quorum > 1 ? ` ${view.votes.filter((v) => v.decision === 'approve').length}/${view.quorum}` : '';
  const outcome = view.outcome
    ? ` → ${view.outcome.decision} by ${view.outcome.approvers.join(', ') || view.outcome.decidedBy}${view.outcome.reason ? ` (${view.outcome.reason})` : ''}`
    : '';
  return `${r.callId}  ${view.status}${votes}  ${callText(r)}  requested by ${r.requester} (agent ${r.agent})  expires ${view.expiresAt}  request ${r.requestId}${outcome}`;
}

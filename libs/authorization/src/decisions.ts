// Decisions are keyed by function-call ID: a decision for call X never authorizes call Y.
import type { DecidedBy, DecisionValue } from '@countersign/contracts';

export interface CallDecision {
  callId: string;
  decision: DecisionValue;
  /** Fingerprint of what the approver saw; must equal the call's own. */
  fingerprint: string;
  decidedBy?: DecidedBy;
  reason?: string;
  approvers?: readonly string[];
  /** What the approver was shown, when known: used only to explain a mismatch. */
  shown?: { toolName: string; args: unknown };
  /** Decision "respond": the approver's text, which the model gets instead of the tool's result. */
  response?: string;
}

export class DecisionBook {
  private readonly byCallId = new Map<string, CallDecision>();

  constructor(decisions: Iterable<CallDecision> = []) {
    for (const d of decisions) this.record(d);
  }

  record(decision: CallDecision): this {
    this.byCallId.set(decision.callId, decision);
    return this;
  }

  /** Unknown call ID → undefined, which means "no decision". */
  get(callId: string): CallDecision | undefined {
    return this.byCallId.get(callId);
  }
}

/** What the model is told when a call is refused, per who refused it. */
export function refusalMessage(decision: Pick<CallDecision, 'decidedBy' | 'reason'>): string {
  switch (decision.decidedBy ?? 'person') {
    case 'person':
      return decision.reason
        ? `Tool execution was denied by the user. Reason: ${decision.reason}`
        : 'Tool execution was denied by the user.';
    case 'expired':
      return 'Tool execution was denied: the approval request expired before anyone decided.';
    case 'no_route':
      return 'Tool execution was refused: no approver is configured for this request.';
    case 'policy':
      return decision.reason
        ? `Tool execution was refused by policy: ${decision.reason}`
        : 'Tool execution was refused by policy.';
  }
}

/**
 * What the model is told when an approver responded with text instead of a verdict: the call did not run, who
 * responded, and their words, marked as theirs (not the tool's output), so the model re-plans with them.
 */
export function responseMessage(
  toolName: string,
  decision: { response?: string; approvers?: readonly string[] },
): string {
  const who = decision.approvers?.length ? decision.approvers.join(', ') : 'an approver';
  return (
    `Tool "${toolName}" was not run: the approver (${who}) responded instead of approving. ` +
    `This is their response, not the tool's output: ${decision.response ?? ''}`
  );
}

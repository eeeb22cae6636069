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

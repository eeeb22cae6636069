// Non-interactive mode: an approver stand-in decides as the runbook says, through the approval service's
// REST API with the approvers' own tokens — so every decision is authorized, fingerprinted and audited.
import type { ApprovalView } from '@countersign/contracts';
import { ApprovalClient } from '../../apps/cli/src/client/approval-client';
import type { ApprovalsConfig } from '../../apps/approval-service/src/config/approvals-config.schema';
import type { StandInDecision } from './runbook';

export interface Vote {
  approver: string;
  decision: 'approve' | 'deny';
  result: string;
}

export class Approvers {
  constructor(
    private readonly config: ApprovalsConfig,
    private readonly approvalUrl: string,
  ) {}

  /** An API client acting as `approverId`. */
  as(approverId: string): ApprovalClient {
    const approver = this.config.approvers.find((a) => a.id === approverId);
    if (!approver) throw new Error(`no approver ${approverId} in the approvals config`);
    return new ApprovalClient(this.approvalUrl, approver.apiToken);
  }

  /** Someone who may read every request (member of the most groups): the demo's observer. */
  get observer(): string {
    const count = (id: string) => this.config.groups.filter((g) => g.members.includes(id)).length;
    return [...this.config.approvers].sort((a, b) => count(b.id) - count(a.id))[0].id;
  }

  /** Members of the request's groups who may decide it (never the requester), in config order. */
  eligible(view: ApprovalView): string[] {
    const members = new Set(
      this.config.groups.filter((g) => view.groups.includes(g.id)).flatMap((g) => g.members),
    );
    return this.config.approvers
      .map((a) => a.id)
      .filter((id) => members.has(id) && id !== view.request.requester);
  }

  tokenOf(approverId: string): string {
    return this.config.approvers.find((a) => a.id === approverId)!.apiToken;
  }
}

/** Approves with as many eligible approvers as the quorum needs; a deny needs one. */
export async function decideAsStandIn(
  approvers: Approvers,
  view: ApprovalView,
  wanted: StandInDecision,
): Promise<Vote[]> {
  const votes: Vote[] = [];
  for (const approver of approvers.eligible(view)) {
    const result = await approvers.as(approver).decide(view.request.callId, wanted.decision, wanted.reason);
    votes.push({
      approver,
      decision: wanted.decision,
      result:
        result.status === 'decided'
          ? `decided: ${result.decision} by ${result.approvers?.join(', ')}`
          : `vote recorded (${result.approvals}/${result.quorum})`,
    });
    if (result.status === 'decided') return votes;
  }
  throw new Error(
    `not enough eligible approvers to decide ${view.request.callId} (groups ${view.groups.join(', ')})`,
  );
}

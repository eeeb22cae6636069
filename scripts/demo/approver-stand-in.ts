// Non-interactive mode: an approver stand-in decides as the runbook says, through the approval service's
// REST API with the approvers' own tokens — so every decision is authorized, fingerprinted and audited.
import type { ApprovalView } from '@countersign/contracts';
import { tokenSha256 } from '@countersign/contracts';
import { ApprovalClient } from '../../apps/cli/src/client/approval-client';
import type { ApprovalServiceConfig } from '../../apps/approval-service/src/config/approval-service.config';
import type { StandInDecision } from './runbook';

/**
 * The demo's readable tokens (config/principals.json holds only their hashes). Every principal of the demo config has
 * one; a PRINCIPALS_CONFIG without them cannot be driven by the stand-in, and demoToken says so.
 */
export function demoToken(config: Pick<ApprovalServiceConfig, 'principals'>, id: string): string {
  const token = `${id}-demo-token-change-me`;
  const principal = config.principals.principals.find((p) => p.id === id);
  if (!principal?.tokens.some((t) => t.sha256 === tokenSha256(token)))
    throw new Error(
      `PRINCIPALS_CONFIG has no demo token for "${id}" (${token}); run the demo with config/principals.json`,
    );
  return token;
}

export interface Vote {
  approver: string;
  decision: 'approve' | 'deny';
  result: string;
}

export class Approvers {
  constructor(
    private readonly config: Pick<ApprovalServiceConfig, 'approvals' | 'principals'>,
    private readonly approvalUrl: string,
  ) {}

  /** An API client acting as `approverId`. */
  as(approverId: string): ApprovalClient {
    return new ApprovalClient(this.approvalUrl, this.tokenOf(approverId));
  }

  /** Someone who may read every request (member of the most groups): the demo's observer. */
  get observer(): string {
    const count = (id: string) => this.config.approvals.groups.filter((g) => g.members.includes(id)).length;
    return [...this.approverIds].sort((a, b) => count(b) - count(a))[0];
  }

  /** Every group member, in the principal directory's order. */
  private get approverIds(): string[] {
    const members = new Set(this.config.approvals.groups.flatMap((g) => g.members));
    return this.config.principals.principals.map((p) => p.id).filter((id) => members.has(id));
  }

  /** Members of the request's groups who may decide it (never the requester), in config order. */
  eligible(view: ApprovalView): string[] {
    const members = new Set(
      this.config.approvals.groups.filter((g) => view.groups.includes(g.id)).flatMap((g) => g.members),
    );
    return this.approverIds.filter((id) => members.has(id) && id !== view.request.requester);
  }

  tokenOf(approverId: string): string {
    return demoToken(this.config, approverId);
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
    const result = await approvers
      .as(approver)
      .decide(view.request.requestId, wanted.decision, wanted.reason);
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

// Who the approvers are, which groups they belong to, and how a bearer token or Slack user maps to one.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { Approver, Group } from '../config/approvals-config.schema';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

@Injectable()
export class ApproverDirectory {
  private readonly approvers: Approver[];
  private readonly groups: Group[];
  private readonly tokenDigests: { approver: Approver; digest: Buffer }[];

  constructor(@Inject(APPROVAL_SERVICE_CONFIG) { approvals }: ApprovalServiceConfig) {
    this.approvers = approvals.approvers;
    this.groups = approvals.groups;
    this.tokenDigests = this.approvers.map((approver) => ({ approver, digest: digest(approver.apiToken) }));
  }

  /** Compares against every approver's token in constant time (digests make the lengths equal). */
  byToken(token: string): Approver | undefined {
    const given = digest(token);
    let found: Approver | undefined;
    for (const entry of this.tokenDigests) if (timingSafeEqual(entry.digest, given)) found = entry.approver;
    return found;
  }

  byId(id: string): Approver | undefined {
    return this.approvers.find((a) => a.id === id);
  }

  bySlackUser(slackUserId: string): Approver | undefined {
    return this.approvers.find((a) => a.slackUserId === slackUserId);
  }

  group(id: string): Group | undefined {
    return this.groups.find((g) => g.id === id);
  }

  groupsOf(approverId: string): string[] {
    return this.groups.filter((g) => g.members.includes(approverId)).map((g) => g.id);
  }

  /** Members of the groups, each once, in config order. */
  membersOf(groupIds: readonly string[]): Approver[] {
    const ids = new Set(groupIds.flatMap((id) => this.group(id)?.members ?? []));
    return this.approvers.filter((a) => ids.has(a.id));
  }
}

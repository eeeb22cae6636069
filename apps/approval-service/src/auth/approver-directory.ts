// Which approver groups exist and who is in them. Who the approvers are (name, email, Slack user, credentials) is the
// shared principal directory's; a principal is an approver of the groups that list it.
import { Inject, Injectable } from '@nestjs/common';
import { Authenticator, type Principal, type PrincipalDirectory } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { Approver, Group } from '../config/approvals-config.schema';

@Injectable()
export class ApproverDirectory {
  private readonly groups: Group[];
  private readonly principals: PrincipalDirectory;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { approvals }: ApprovalServiceConfig,
    authenticator: Authenticator,
  ) {
    this.groups = approvals.groups;
    this.principals = authenticator.directory;
  }

  byId(id: string): Approver | undefined {
    return this.principals.get(id);
  }

  bySlackUser(slackUserId: string): Approver | undefined {
    return this.principals.bySlackUser(slackUserId);
  }

  group(id: string): Group | undefined {
    return this.groups.find((g) => g.id === id);
  }

  groupsOf(approverId: string): string[] {
    return this.groups.filter((g) => g.members.includes(approverId)).map((g) => g.id);
  }

  /**
   * Members of an approver group, and rule-writers (the inbox's Rules view is theirs): whom the web inbox signs in,
   * and who may read the standing rules. Anyone else has nothing to do there.
   */
  isApproverOrRuleWriter(principal: Principal): boolean {
    return principal.roles.includes('rule-writer') || this.groupsOf(principal.id).length > 0;
  }

  /** Members of the groups, each once, in the principal directory's order. */
  membersOf(groupIds: readonly string[]): Approver[] {
    const ids = new Set(groupIds.flatMap((id) => this.group(id)?.members ?? []));
    return this.principals.all().filter((a) => ids.has(a.id));
  }
}

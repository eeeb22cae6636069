// Standing rules: created (from a trust suggestion, or written) and revoked by rule-writers, audited both ways. The
// rules decide in ApprovalsService.receive, which reads them from Redis for every request.
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { STANDING_RULE_EXPIRY, type NewStandingRule, type StandingRule } from '@countersign/contracts';
import { ToolCatalog, type Logger, type Principal } from '@countersign/platform';
import { AmbiguousCallIdError } from '../approvals/approval-errors';
import { trustSuggestion } from '../approvals/approval-store';
import { ApprovalsService } from '../approvals/approvals.service';
import { StandingRuleStore } from '../approvals/standing-rule-store';
import { ApproverDirectory } from '../auth/approver-directory';
import { AuditTrail } from '../core/audit-trail';
import { LOGGER } from '../core/tokens';

/** Why a rule cannot be made or revoked; `kind` is the HTTP answer's class, `message` names what is wrong. */
export class StandingRuleRefusedError extends Error {
  constructor(
    readonly kind: 'invalid' | 'forbidden' | 'not_found' | 'conflict',
    message: string,
  ) {
    super(message);
    this.name = this.constructor.name;
  }
}

@Injectable()
export class StandingRulesService implements OnModuleInit {
  constructor(
    private readonly rules: StandingRuleStore,
    private readonly approvals: ApprovalsService,
    private readonly directory: ApproverDirectory,
    private readonly tools: ToolCatalog,
    private readonly audit: AuditTrail,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Before any request is taken: every shard of the approval state gets the rules it lacks (see syncCopies). */
  async onModuleInit(): Promise<void> {
    const written = await this.rules.syncCopies();
    if (written > 0) this.logger.info({ written }, 'standing rules copied into the shards that lacked them');
  }

  /**
   * A rule-writer accepts a request's trust suggestion (its tool and requester) or writes a rule. Refused when it
   * would cover the author's own calls, a manual_only tool, a tool no agent declared, or an unknown requester.
   */
  async create(body: NewStandingRule, author: Principal, now = Date.now()): Promise<StandingRule> {
    const target = body.fromCallId
      ? await this.fromSuggestion(body.fromCallId, author)
      : { tool: body.tool!, requester: body.requester!, from: undefined };
    if (target.requester === author.id)
      throw new StandingRuleRefusedError(
        'forbidden',
        'a standing rule may not cover your own calls (the requester never decides)',
      );
    if (!this.directory.byId(target.requester))
      throw new StandingRuleRefusedError('invalid', `requester: no principal "${target.requester}"`);
    const definitions = await this.tools.byName(target.tool);
    if (definitions.length === 0)
      throw new StandingRuleRefusedError(
        'invalid',
        `tool: no agent has declared a tool "${target.tool}" (its requests would name it)`,
      );
    if (definitions.some((d) => d.tier === 'manual_only'))
      throw new StandingRuleRefusedError(
        'forbidden',
        `tool: ${target.tool} is manual_only: a person must do it, so no rule may decide it`,
      );
    const rule: StandingRule = {
      id: StandingRuleStore.newId(),
      tool: target.tool,
      requester: target.requester,
      ...(body.args ? { args: body.args } : {}),
      createdBy: author.id,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + (body.expiresIn ?? STANDING_RULE_EXPIRY.defaultMs)).toISOString(),
      ...(target.from ? { fromCallId: target.from.callId } : {}),
      ...(body.note ? { note: body.note } : {}),
    };
    await this.rules.add(rule);
    await this.audit.append({
      type: 'rule.created',
      actor: author.id,
      callId: target.from?.callId,
      runId: target.from?.runId,
      detail: { rule, ...(target.from ? { requestId: target.from.requestId } : {}) },
    });
    return rule;
  }

  /** Stops the rule at once: the next request reads the rules without it, on every replica. */
  async revoke(id: string, by: Principal): Promise<StandingRule> {
    const rule = await this.rules.revoke(id);
    if (!rule) throw new StandingRuleRefusedError('not_found', `no standing rule ${id}`);
    await this.audit.append({ type: 'rule.revoked', actor: by.id, detail: { rule } });
    return rule;
  }

  async list(now = Date.now()): Promise<StandingRule[]> {
    return (await this.rules.all(now)).map((r) => r.rule);
  }

  /** Whether a principal may see the rules: approvers (who see what they decide) and rule-writers. */
  maySee(principal: Principal): boolean {
    return this.directory.isApproverOrRuleWriter(principal);
  }

  /** `id`: a request ID, or a call ID that names one request (as in /approvals/:id). */
  private async fromSuggestion(
    id: string,
    author: Principal,
  ): Promise<{
    tool: string;
    requester: string;
    from: { requestId: string; callId: string; runId: string };
  }> {
    const mine = this.directory.groupsOf(author.id);
    const routedToAuthor = (a: { groups: string[] }) => a.groups.some((g) => mine.includes(g));
    const resolution = await this.approvals.resolve(id, routedToAuthor);
    if (resolution.status === 'ambiguous')
      throw new StandingRuleRefusedError(
        'conflict',
        `fromCallId: ${new AmbiguousCallIdError(id, resolution.requestIds).message}`,
      );
    const approval = resolution.status === 'found' ? resolution.approval : undefined;
    if (!approval || !routedToAuthor(approval))
      throw new StandingRuleRefusedError('not_found', `fromCallId: no approval request ${id} routed to you`);
    if (!trustSuggestion(approval))
      throw new StandingRuleRefusedError(
        'conflict',
        `fromCallId: request ${id} carries no trust suggestion (fewer than 5 approvals in a row); write the rule with tool and requester instead`,
      );
    const { requestId, callId, runId, toolName, requester } = approval.request;
    return { tool: toolName, requester, from: { requestId, callId, runId } };
  }
}

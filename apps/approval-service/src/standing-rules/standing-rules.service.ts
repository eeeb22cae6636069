// Standing rules: created (from a trust suggestion, or written) and revoked by rule-writers, audited both ways. The
// rules decide in RuleDecider, which intake asks for every request (and which reads them from Redis every time). Whether a rule may decide
// the calls it covers is mayDecide's (deciders.ts), asked here for every route they could get, and again when a call
// matches.
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  STANDING_RULE_EXPIRY,
  StandingRuleArgsSchema,
  type ApprovalRequest,
  type NewStandingRule,
  type StandingRule,
} from '@countersign/contracts';
import { type Logger, type Principal } from '@countersign/platform';
import { ToolCatalog } from '@countersign/shared-records';
import { ApproverDirectory } from '../auth/approver-directory';
import { AuditTrail } from '../core/audit-trail';
import { LOGGER } from '../core/tokens';
import { AmbiguousCallIdError, ApprovalReadModel } from '../requests/approval-read-model';
import { trustSuggestion } from '../requests/approval-views';
import { isLiteralGlob } from '../requests/routing/glob';
import { RequestRouter } from '../requests/routing/request-router';
import { routedArgument, type CallPattern } from '../requests/routing/route-request';
import { mayDecide, type Revision } from '../votes/deciders';
import { StandingRuleStore } from './standing-rule-store';

type RuleArgs = NonNullable<StandingRule['args']>;

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
    private readonly readModel: ApprovalReadModel,
    private readonly router: RequestRouter,
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
   * A rule-writer accepts a request's trust suggestion (its tool and requester, and the arguments routing looks at) or
   * writes a rule. Refused when it names an unknown requester or a tool no agent declared, covers a manual_only tool,
   * or when mayDecide refuses it for a route its calls could get: the author's own calls, runbook_gate, a route that
   * needs more than one approver.
   */
  async create(body: NewStandingRule, author: Principal, now = Date.now()): Promise<StandingRule> {
    const target = body.fromCallId
      ? await this.fromSuggestion(body.fromCallId, author)
      : { tool: body.tool!, requester: body.requester!, args: undefined, from: undefined };
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
    const args = target.args || body.args ? { ...target.args, ...body.args } : undefined;
    if (args && !StandingRuleArgsSchema.safeParse(args).success)
      throw new StandingRuleRefusedError(
        'invalid',
        'args: with the arguments pinned from the suggested call, more than 10 argument patterns; send fewer',
      );
    this.assertMayDecide(
      { toolName: target.tool, tier: 'confirm', requester: target.requester, args: args ?? {} },
      author,
    );
    const rule: StandingRule = {
      id: StandingRuleStore.newId(),
      tool: target.tool,
      requester: target.requester,
      ...(args ? { args } : {}),
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

  /**
   * Asks mayDecide about every route a call the rule covers could get (possibleRoutes: from the tool, the confirm tier
   * a rule decides, the requester and the rule's argument patterns, any agent). Without any route the calls are
   * denied before a rule is asked; the author and tool checks still apply, on a revision of no groups.
   */
  private assertMayDecide(pattern: CallPattern, author: Principal): void {
    const routes = this.router.possibleRoutes(pattern);
    const base: Revision = {
      toolName: pattern.toolName,
      requester: pattern.requester,
      groups: [],
      quorum: 1,
      voters: [],
    };
    const candidates = routes.length > 0 ? routes : [{ rule: '', groups: [], quorum: 1 }];
    for (const route of candidates) {
      const verdict = mayDecide(
        { kind: 'standing_rule', author: author.id },
        { ...base, groups: route.groups, quorum: route.quorum },
      );
      if (verdict.allowed) continue;
      if (verdict.refusal !== 'needs_people')
        throw new StandingRuleRefusedError('forbidden', verdict.message);
      throw new StandingRuleRefusedError(
        'forbidden',
        `args: ${pattern.toolName} calls of ${pattern.requester}${Object.keys(pattern.args).length > 0 ? ' with these arguments' : ''} may be routed by ${routeLabel(route.rule)} to ${route.groups.join(', ')}, whose ${verdict.message}; narrow the rule with argument patterns that keep its calls off that route`,
      );
    }
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

  /**
   * `id`: a request ID, or a call ID that names one request (as in /approvals/:id). The rule covers the suggested
   * call's tool and requester, and pins each argument the routing rules look at to the suggested call's value, so it
   * covers the calls that route like that one.
   */
  private async fromSuggestion(
    id: string,
    author: Principal,
  ): Promise<{
    tool: string;
    requester: string;
    args: RuleArgs | undefined;
    from: { requestId: string; callId: string; runId: string };
  }> {
    const mine = this.directory.groupsOf(author.id);
    const routedToAuthor = (a: { groups: string[] }) => a.groups.some((g) => mine.includes(g));
    const resolution = await this.readModel.resolve(id, routedToAuthor);
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
    return {
      tool: toolName,
      requester,
      args: this.pinned(approval.request),
      from: { requestId, callId, runId },
    };
  }

  /**
   * The arguments routing looks at, as patterns that match exactly the request's values, where a rule's pattern can
   * (StandingRuleArgsSchema); one it cannot stays open, and assertMayDecide then counts every route it allows.
   */
  private pinned(request: ApprovalRequest): RuleArgs | undefined {
    const args: RuleArgs = {};
    for (const path of this.router.routedArgumentPaths()) {
      const value = routedArgument(request.args, path);
      if (value === undefined || !isLiteralGlob(value)) continue;
      const pinned = { ...args, [path]: value };
      if (StandingRuleArgsSchema.safeParse(pinned).success) Object.assign(args, pinned);
    }
    return Object.keys(args).length > 0 ? args : undefined;
  }
}

/** How the refusal names a routing rule. */
function routeLabel(rule: string): string {
  return rule === 'defaultGroup' ? 'the default group' : `rule “${rule}”`;
}

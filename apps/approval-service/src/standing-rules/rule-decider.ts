// A standing rule deciding a request as it comes in: the first rule that covers it (same tool and requester, matching
// arguments, not expired) approves it by policy, if mayDecide (deciders.ts) lets that rule decide the route it got and
// the rule is still stored as it was matched when the request is stored (decide-by-rule-5.lua). Else people decide.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalRequest, StandingRule } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { Settlement } from '../decisions/settlement';
import type { Outcome } from '../requests/approval-types';
import { requestTakenIn } from '../requests/request-audit';
import { RequestStore } from '../requests/request-store';
import { argumentsMatch, type Route } from '../requests/routing/route-request';
import { RunAccess } from '../requests/run-access';
import { mayDecide, revisionOf, type Decider } from '../votes/deciders';
import { ruleReason, StandingRuleStore, type StoredRule } from './standing-rule-store';

@Injectable()
export class RuleDecider {
  constructor(
    private readonly rules: StandingRuleStore,
    private readonly requests: RequestStore,
    private readonly settlement: Settlement,
    private readonly runAccess: RunAccess,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Decides the request by the first standing rule that covers it, if any. False: no rule did (or the one that did
   * was revoked meanwhile), and people decide.
   */
  async decide(request: ApprovalRequest, route: Route, now: number): Promise<boolean> {
    // Rules are written for the tools of Countersign's own agents: an external agent's call is always asked about.
    if (request.external) return false;
    if (request.reason !== 'confirmation_required' || request.tier !== 'confirm') return false;
    const match = (await this.rules.all(now)).find((r) => ruleCovers(r.rule, request, now));
    if (!match) return false;
    const rule: Decider = { kind: 'standing_rule', author: match.rule.createdBy };
    const verdict = mayDecide(
      rule,
      revisionOf({ request, groups: route.groups, quorum: route.quorum, votes: [] }),
    );
    if (!verdict.allowed) {
      // Written before the routing config (or the rules of who may decide) changed: people decide.
      this.logger.warn(
        {
          runId: request.runId,
          callId: request.callId,
          standingRule: match.rule.id,
          refusal: verdict.refusal,
        },
        `a standing rule covers the request but may not decide it: ${verdict.message}`,
      );
      return false;
    }
    await this.runAccess.allowToRead(request, route.groups, now);
    const decided = await this.rules.decide(request, match, route, now);
    if (decided.status === 'rule_gone') return false;
    if (decided.status === 'already_stored') {
      if (decided.current === 'pending' || decided.current === 'notice') return false;
      const stored = await this.requests.get(request.requestId);
      if (stored?.outcome && !stored.published)
        await this.settlement.settle(stored.request, stored.outcome, []);
      return true;
    }
    return this.announceRuleDecision(request, match, route, now);
  }

  private async announceRuleDecision(
    request: ApprovalRequest,
    match: StoredRule,
    route: Route,
    now: number,
  ): Promise<true> {
    const { requestId, callId, runId } = request;
    const rule = match.rule;
    const outcome = ruleOutcome(rule, now);
    this.metrics.requestsReceived.inc({ outcome: 'standing_rule' });
    this.audit.record(
      requestTakenIn('request.created', request, {
        rule: route.rule,
        why: route.why,
        groups: route.groups,
        standingRule: rule.id,
        fingerprint: request.fingerprint,
      }),
    );
    this.audit.record({
      type: 'decision.recorded',
      runId,
      callId,
      actor: `rule:${rule.id}`,
      detail: {
        decision: 'approve',
        decidedBy: 'policy',
        standingRule: rule.id,
        ruleBy: rule.createdBy,
        requestId,
      },
    });
    await this.settlement.settle(request, outcome, []);
    this.logger.info({ runId, callId, requestId, standingRule: rule.id }, 'approved by a standing rule');
    return true;
  }
}

/** A standing rule's approval: which rule, whose, until when. */
function ruleOutcome(rule: StandingRule, now: number): Outcome {
  return {
    decision: 'approve',
    decidedBy: 'policy',
    approvers: [],
    reason: ruleReason(rule),
    decidedAt: new Date(now).toISOString(),
    rule: rule.id,
  };
}

/** Whether a standing rule approves this request: same tool and requester, matching arguments, not expired. */
export function ruleCovers(rule: StandingRule, request: ApprovalRequest, now: number): boolean {
  return (
    rule.tool === request.toolName &&
    rule.requester === request.requester &&
    Date.parse(rule.expiresAt) > now &&
    argumentsMatch(rule.args ?? {}, request.args)
  );
}

// Takes approval requests in (off the approval-requests queue, and from the approvals API): checks that what the agent
// asks is what approvers will be shown (the fingerprint), routes it, lets a standing rule decide it or stores it for
// people, lets its approvers read its run, and asks them. A request no route takes is denied at once. Safe to run
// again with the same message (a redelivery): the request is stored once, its notifications queued once.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalRequest } from '@countersign/contracts';
import { fingerprint, printableReadableForm } from '@countersign/authorization';
import type { Logger } from '@countersign/platform';
import { AuditTrail } from '../../core/audit-trail';
import { Metrics } from '../../core/metrics';
import { LOGGER } from '../../core/tokens';
import { noRouteOutcome } from '../../decisions/outcomes';
import { Settlement } from '../../decisions/settlement';
import type { Outcome } from '../approval-types';
import { NotificationScheduler } from '../../notifications/notification-scheduler';
import { RuleDecider } from '../../standing-rules/rule-decider';
import { requestTakenIn } from '../request-audit';
import { RecentRequests } from '../recent-requests';
import { RequestStore } from '../request-store';
import { RequestRouter } from '../routing/request-router';
import { RunAccess } from '../run-access';

/** A request that can never be shown faithfully (its fingerprint does not match its tool and arguments). */
export class RequestRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

@Injectable()
export class RequestIntake {
  constructor(
    private readonly requests: RequestStore,
    private readonly recent: RecentRequests,
    private readonly router: RequestRouter,
    private readonly rules: RuleDecider,
    private readonly settlement: Settlement,
    private readonly scheduler: NotificationScheduler,
    private readonly runAccess: RunAccess,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Takes a request off the queue. Safe to call again with the same message (redelivery). */
  async receive(request: ApprovalRequest): Promise<void> {
    const { requestId, callId, runId, attempt } = request;
    const shown = fingerprint(request.toolName, request.args);
    if (shown !== request.fingerprint) {
      await this.audit.append({
        type: 'decision.rejected',
        runId,
        callId,
        detail: {
          reason: 'fingerprint_mismatch',
          requestId,
          readableForm: printableReadableForm(request.toolName, request.args),
        },
      });
      throw new RequestRejectedError(`fingerprint does not match toolName and args (expected ${shown})`);
    }
    const now = Date.now();
    const route = this.router.route(request);
    const isNotice = request.reason === 'manual_step';

    if (!route && !isNotice) return this.refuseUnroutable(request, now);
    // The trust count stored with the request is read now, in the same round trip as the standing rules (issue 27);
    // a request a rule decides leaves it unused.
    const trust = this.requests.trustCount(request.requester, request.toolName);
    trust.catch(() => undefined); // awaited by create below, when a rule does not decide the request
    if (route && !isNotice && (await this.rules.decide(request, route, now))) return;

    const expiresInMs = route?.expiresInMs ?? this.router.defaultExpiryMs;
    const escalation = route?.escalation;
    // Before the request is stored: an approver who can see it can also read the run it comes from.
    await this.runAccess.allowToRead(request, route?.groups ?? [], now + expiresInMs);
    // The expiry and escalation timers are stored by the same script that stores the request, so a stored
    // request always has them: a redelivery finds nothing missing to schedule, and leaves them where they are.
    const created = await this.requests.create(
      {
        request,
        status: isNotice ? 'notice' : 'pending',
        groups: route?.groups ?? [],
        quorum: route?.quorum ?? 1,
        channels: route?.channels ?? [],
        route: route && { rule: route.rule, why: route.why },
        now,
        expiresAt: now + expiresInMs,
        escalation:
          !isNotice && escalation && escalation.afterMs < expiresInMs
            ? { at: now + escalation.afterMs, groups: escalation.groups }
            : undefined,
      },
      trust,
    );
    if (!created.created && created.status !== 'pending' && created.status !== 'notice') return;
    // Its first vote is checked on this copy, unread (RecentRequests).
    if (created.stored) this.recent.remember(created.stored);

    const target = {
      requestId,
      callId,
      attempt,
      requester: request.requester,
      groups: route?.groups ?? [],
      channels: route?.channels ?? [],
      phase: 'request' as const,
    };
    // Notifications are awaited: the message is only done with once they are queued (a redelivery queues them
    // again, deduplicated by job ID). Open inboxes already heard of the request: the store's script announced it.
    const notified = this.scheduler.notifyApprovers(target);
    if (created.created) {
      this.metrics.requestsReceived.inc({ outcome: isNotice ? 'notice' : 'routed' });
      this.audit.record(
        requestTakenIn(isNotice ? 'request.notice' : 'request.created', request, {
          reason: request.reason,
          rule: route?.rule ?? null,
          why: route?.why ?? null,
          groups: target.groups,
          quorum: route?.quorum ?? null,
          fingerprint: shown,
          ...(request.external && {
            source: 'external',
            client: request.external.principal,
            clientCallId: request.external.callId,
          }),
        }),
      );
    }
    await notified;
    this.logger.info(
      { runId, callId, requestId, attempt, rule: route?.rule, notice: isNotice },
      'approval request received',
    );
  }

  /**
   * Takes a request in already denied by a policy that is not a person (an admission hook of the approvals API): stored
   * decided, the decision audited in `decider`'s name and published like any other (the client's webhook), nobody
   * asked. Safe to call again with the same request.
   */
  async refuse(
    request: ApprovalRequest,
    decider: { actor: string; reason: string; detail: Record<string, unknown> },
  ): Promise<void> {
    const now = Date.now();
    const outcome: Outcome = {
      decision: 'deny',
      decidedBy: 'policy',
      approvers: [],
      reason: decider.reason,
      decidedAt: new Date(now).toISOString(),
    };
    await this.storeRefused(request, now, outcome, 'admission_hook', async () => {
      await this.audit.append({
        type: 'decision.recorded',
        callId: request.callId,
        runId: request.runId,
        actor: decider.actor,
        detail: {
          decision: 'deny',
          decidedBy: 'policy',
          reason: decider.reason,
          requestId: request.requestId,
          ...decider.detail,
        },
      });
    });
  }

  private refuseUnroutable(request: ApprovalRequest, now: number): Promise<void> {
    return this.storeRefused(request, now, noRouteOutcome(now), 'no_route');
  }

  /** Stores a request decided `deny` as it comes in, audits it and publishes its decision (once, on redelivery too). */
  private async storeRefused(
    request: ApprovalRequest,
    now: number,
    outcome: Outcome,
    counted: string,
    auditDecision?: () => Promise<void>,
  ): Promise<void> {
    const created = await this.requests.create({
      request,
      status: 'decided',
      groups: [],
      quorum: 1,
      channels: [],
      now,
      expiresAt: now,
      refusal: { decidedBy: outcome.decidedBy, reason: outcome.reason ?? '', at: outcome.decidedAt },
    });
    if (created.created) {
      this.metrics.requestsReceived.inc({ outcome: counted });
      await this.audit.append({
        type: 'request.created',
        callId: request.callId,
        runId: request.runId,
        actor: request.requester,
        detail: { toolName: request.toolName, route: null, requestId: request.requestId },
      });
      await auditDecision?.();
      return this.settlement.settle(request, outcome, []);
    }
    // Redelivered: publish again only if the first delivery died before publishing.
    const stored = await this.requests.get(request.requestId);
    if (stored?.outcome && !stored.published)
      await this.settlement.settle(stored.request, stored.outcome, stored.channels);
  }
}

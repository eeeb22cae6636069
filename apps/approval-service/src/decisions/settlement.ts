// Settling a request: its signed decision published (so the worker, or the approvals API's client through its webhook,
// hears of it), counted and audited; then, without holding the caller up, open inboxes and every channel that showed
// the request are told, and the decision is marked published. A manual step marked done is published alike. Every
// settled request gets exactly one signed decision (idempotent job ID), whichever path settled it.
import { Inject, Injectable } from '@nestjs/common';
import type { AuditInput } from '@countersign/audit';
import type { ApprovalRequest, SignedDecision } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { AuditTrail } from '../core/audit-trail';
import { FollowUps } from '../core/follow-ups';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { NotificationScheduler } from '../notifications/notification-scheduler';
import type { Outcome } from '../requests/approval-types';
import { LiveUpdates } from '../requests/live-updates';
import { RequestStore } from '../requests/request-store';
import { DecisionPublisher } from './decision-publisher';
import { DecisionStore } from './decision-store';

@Injectable()
export class Settlement {
  constructor(
    private readonly publisher: DecisionPublisher,
    private readonly decisions: DecisionStore,
    private readonly requests: RequestStore,
    private readonly scheduler: NotificationScheduler,
    private readonly audit: AuditTrail,
    private readonly live: LiveUpdates,
    private readonly metrics: Metrics,
    private readonly followUps: FollowUps,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Publishes the decision; returns once it is on the queue (the caller may then say "decided"). Telling
   * the channels and cleaning up follow without holding the caller up. `vote`: the person's vote that decided it —
   * its entry (decision.recorded) goes in the same audit append as decision.published and its trust count beside
   * them, in one Redis trip after the decision job's add (issue 27), or right away when the add fails; `groups`: the
   * groups the request is routed to, when the vote knows them, for the live update.
   */
  async settle(
    request: ApprovalRequest,
    outcome: Outcome,
    channels: string[],
    vote?: { recorded: AuditInput; groups?: string[] },
  ): Promise<void> {
    const { requestId, callId, runId, attempt } = request;
    let signed: SignedDecision;
    try {
      signed = await this.publisher.publish(request, outcome);
    } finally {
      if (vote) {
        this.audit.record(vote.recorded);
        this.countTrust(request, outcome);
      }
    }
    this.metrics.decisionsPublished.inc({ decision: outcome.decision, decided_by: outcome.decidedBy });
    this.metrics.timeToDecision.observe(
      (Date.parse(outcome.decidedAt) - Date.parse(request.requestedAt)) / 1000,
    );
    this.audit.record({
      type: 'decision.published',
      callId,
      runId,
      actor: outcome.approvers.join(',') || outcome.decidedBy,
      detail: {
        decision: outcome.decision,
        decidedBy: outcome.decidedBy,
        approvers: outcome.approvers,
        reason: outcome.reason ?? null,
        ...(outcome.response ? { response: outcome.response } : {}),
        fingerprint: signed.fingerprint,
        attempt,
        requestId,
      },
    });
    const ids = { callId, runId, requestId };
    const status = outcome.decidedBy === 'expired' ? 'expired' : 'decided';
    // The vote knows the groups the request is routed to (its route version was checked): announced with them.
    const route = vote?.groups ? { callId, routedTo: vote.groups.join(',') } : {};
    this.followUps.add(ids, this.live.announce({ requestId, status, ...route }));
    this.followUps.add(ids, this.afterPublish(request, outcome, channels));
    this.logger.info(
      {
        ...ids,
        attempt,
        decision: outcome.decision,
        decidedBy: outcome.decidedBy,
        approvers: outcome.approvers,
      },
      'decision published',
    );
  }

  /** Counts what people decided into the requester's trust in the tool; it never holds up (or fails) the decision. */
  private countTrust(request: ApprovalRequest, outcome: Outcome): void {
    const { callId, runId, requestId } = request;
    this.followUps.add({ callId, runId, requestId }, this.decisions.countTrust(request, outcome));
  }

  /** Tells the run's worker (signed) that a person did a notice's manual step; the channels follow. */
  async publishDone(
    request: ApprovalRequest,
    done: { by: string; at: string; note?: string },
  ): Promise<void> {
    const { callId, runId, requestId, attempt } = request;
    await this.publisher.publishManualStepDone(request, done);
    this.followUps.add(
      { callId, runId, requestId },
      (async () => {
        const stored = await this.requests.get(requestId);
        await this.scheduler.showOutcome(request, { channels: stored?.channels ?? [], decidedBy: 'person' });
        await this.decisions.markPublished(requestId, attempt);
      })(),
    );
  }

  /**
   * In this order, so that the expiry timer stays as the safety net until everything is done: settling turned it
   * into the publish check, which re-publishes (and re-queues the outcome notice of) a decision that is not
   * marked published; marking it published removes the timer in the same step.
   */
  private async afterPublish(request: ApprovalRequest, outcome: Outcome, channels: string[]): Promise<void> {
    if (outcome.decidedBy !== 'no_route')
      await this.scheduler.showOutcome(request, { channels, decidedBy: outcome.decidedBy });
    await this.decisions.markPublished(request.requestId, request.attempt);
  }
}

// What a due timer does: the expiry denies a request nobody decided in time ("expired"), retires a notice, and, as the
// publish check of a settled request, publishes a decision its decider recorded but died before publishing; the
// escalation adds the escalation groups, who may then read the run and are asked.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { AuditTrail } from '../core/audit-trail';
import { LOGGER } from '../core/tokens';
import { expiredOutcome } from '../decisions/outcomes';
import { Settlement } from '../decisions/settlement';
import { NotificationScheduler } from '../notifications/notification-scheduler';
import { LiveUpdates } from '../requests/live-updates';
import { RequestStore } from '../requests/request-store';
import { RunAccess } from '../requests/run-access';
import { TimerStore } from './timer-store';

/**
 * What a timer run left behind: `done`, the timer can go; `kept`, it stays (moved back to the expiry, or turned
 * into the publish check that markPublished removes).
 */
export type TimerOutcome = 'done' | 'kept';

@Injectable()
export class TimersService {
  constructor(
    private readonly timers: TimerStore,
    private readonly requests: RequestStore,
    private readonly settlement: Settlement,
    private readonly scheduler: NotificationScheduler,
    private readonly runAccess: RunAccess,
    private readonly audit: AuditTrail,
    private readonly live: LiveUpdates,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Expiry timer: deny "expired" if still pending; re-publish a decision that was recorded but never published.
   * `kept`: the timer stays, as the publish check of the decision just published, or moved to the expiry.
   */
  async expire(requestId: string, attempt: number): Promise<TimerOutcome> {
    const result = await this.timers.expire(requestId, attempt);
    if (result === 'notice_retired') {
      await this.live.announce({ requestId, status: 'expired' });
      return 'done';
    }
    if ('expired' in result) {
      const stored = await this.requests.get(requestId);
      const settledOutcome = stored?.outcome ?? expiredOutcome(Date.now());
      await this.audit.append({
        type: 'decision.recorded',
        callId: result.expired.callId,
        runId: result.expired.runId,
        actor: 'expiry',
        detail: { decision: 'deny', decidedBy: 'expired', requestId },
      });
      await this.settlement.settle(result.expired, settledOutcome, stored?.channels ?? []);
      return 'kept';
    }
    if ('notDueFor' in result) return 'kept';
    const stored = await this.requests.get(requestId);
    if (stored?.done && !stored.published && stored.request.attempt === attempt) {
      this.logger.warn(
        { requestId, callId: stored.request.callId, runId: stored.request.runId },
        're-publishing a manual step marked done',
      );
      await this.settlement.publishDone(stored.request, stored.done);
      return 'kept';
    }
    if (stored?.outcome && !stored.published && stored.request.attempt === attempt) {
      this.logger.warn(
        { requestId, callId: stored.request.callId, runId: stored.request.runId },
        're-publishing a decision that was recorded but not published',
      );
      await this.settlement.settle(stored.request, stored.outcome, stored.channels);
      return 'kept';
    }
    return 'done';
  }

  /** Escalation timer: if still pending, the escalation groups stored with it may decide too and are notified. */
  async escalate(requestId: string, attempt: number): Promise<TimerOutcome> {
    const escalation = await this.timers.escalate(requestId, attempt);
    if (escalation.status === 'no') return 'done';
    const { groups } = escalation;
    const stored = await this.requests.get(requestId);
    if (!stored) return 'done';
    const { callId, runId, requester } = stored.request;
    await this.runAccess.allowToRead(stored.request, groups, stored.expiresAt);
    // A retried timer notifies again (deduplicated by job ID) but audits the escalation only once.
    await Promise.all([
      this.scheduler.notifyApprovers({
        requestId,
        callId,
        attempt,
        requester,
        groups,
        channels: stored.channels,
        phase: 'escalation',
      }),
      escalation.status === 'escalated' &&
        this.audit.append({
          type: 'request.escalated',
          callId,
          runId,
          detail: { groups, requestId },
        }),
      this.live.announce({ requestId, status: 'pending' }),
    ]);
    return 'done';
  }
}

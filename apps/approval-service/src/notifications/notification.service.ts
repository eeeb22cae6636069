// Delivers notifications (Slack messages, emails) and shows outcomes on the channels that showed a request.
// Throwing makes BullMQ retry with backoff; the request itself stays decidable in the inbox and API meanwhile.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalServiceJobName, JobPayload } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { ApprovalStore, type StoredApproval } from '../approvals/approval-store';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { ServiceAddress } from '../core/service-address';
import { LOGGER } from '../core/tokens';
import { EmailNotifier } from '../email/email-notifier';
import { expiredMail, requestMail } from '../email/email-messages';
import { signLinkToken } from '../email/link-token';
import { outcomeMessage, requestMessage } from '../slack/slack-blocks';
import { SlackNotifier } from '../slack/slack-notifier';

type Payload<K extends ApprovalServiceJobName> = JobPayload<K>;

const isOpen = (a: StoredApproval) => a.status === 'pending' || a.status === 'notice';

@Injectable()
export class NotificationService {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly store: ApprovalStore,
    private readonly directory: ApproverDirectory,
    private readonly slack: SlackNotifier,
    private readonly email: EmailNotifier,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    private readonly address: ServiceAddress,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async notifySlack(job: Payload<'notify.slack'>): Promise<void> {
    const approval = await this.current(job);
    if (!approval || !isOpen(approval)) return; // settled before we got to it: nothing to show
    if (!this.slack.enabled) return;
    const posted = await this.slack.post(job.channel, requestMessage(approval));
    await this.store.rememberSlackMessage(job.callId, posted.channel, posted.ts);
    await this.sent(approval, 'slack', job.channel);
    // Settled while we were posting: the outcome job may have missed this message, so update it now.
    const after = await this.store.get(job.callId);
    if (after && !isOpen(after) && after.request.reason !== 'manual_step') {
      await this.slack.update(posted.channel, posted.ts, outcomeMessage(after));
    }
  }

  async notifyEmail(job: Payload<'notify.email'>): Promise<void> {
    const approval = await this.current(job);
    const approver = this.directory.byId(job.approver);
    if (!approval || !isOpen(approval) || !approver?.email) return;
    const token = signLinkToken(
      { callId: job.callId, attempt: job.attempt, approver: approver.id, expiresAt: approval.expiresAt },
      this.config.env.LINK_TOKEN_SECRET,
    );
    const link = `${this.address.publicUrl}/approve/${token}`;
    await this.email.send(requestMail(approval, approver.email, link), {
      callId: job.callId,
      runId: approval.request.runId,
    });
    await this.store.rememberEmailed(job.callId, approver.id);
    await this.sent(approval, 'email', approver.id);
  }

  /**
   * Every Slack message of the request now shows the outcome; an expiry is also emailed to those who were sent
   * the request (not every member of its groups: an escalated member whose email had not gone out yet never saw
   * it).
   */
  async showOutcome(job: Payload<'notify.outcome'>): Promise<void> {
    const approval = await this.current(job);
    if (!approval || isOpen(approval)) return;
    for (const message of approval.slackMessages) {
      if (this.slack.enabled) await this.slack.update(message.channel, message.ts, outcomeMessage(approval));
    }
    if (approval.outcome?.decidedBy === 'expired' && approval.channels.includes('email')) {
      for (const approver of approval.emailed.map((id) => this.directory.byId(id))) {
        if (approver?.email && approver.id !== approval.request.requester) {
          await this.email.send(expiredMail(approval, approver.email), {
            callId: job.callId,
            runId: approval.request.runId,
          });
        }
      }
    }
  }

  /** Called once retries are exhausted. */
  async failed(job: { callId: string; channel: string; target: string; error: string }): Promise<void> {
    this.metrics.notifications.inc({ channel: job.channel, result: 'failed' });
    this.logger.error(
      { callId: job.callId, channel: job.channel, target: job.target, error: job.error },
      'notification failed for good',
    );
    await this.audit.append({
      type: 'notification.failed',
      callId: job.callId,
      detail: { channel: job.channel, target: job.target, error: job.error },
    });
  }

  private async current(job: { callId: string; attempt: number }): Promise<StoredApproval | undefined> {
    const approval = await this.store.get(job.callId);
    return approval && approval.request.attempt === job.attempt ? approval : undefined;
  }

  private async sent(approval: StoredApproval, channel: string, target: string): Promise<void> {
    this.metrics.notifications.inc({ channel, result: 'sent' });
    await this.audit.append({
      type: 'notification.sent',
      callId: approval.request.callId,
      runId: approval.request.runId,
      detail: { channel, target },
    });
  }
}

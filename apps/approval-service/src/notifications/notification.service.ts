// Delivers notifications (Slack messages, emails, digests) and shows outcomes on the channels that showed a request.
// Throwing makes BullMQ retry with backoff; the request itself stays decidable in the inbox and API meanwhile.
// Every post and email goes through OnceOnlyDelivery, so a retry never repeats one (see there for the window
// in which a delivery is in doubt and why that window is at-most-once); chat.update is repeated freely: it only
// sets the same content again.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalServiceJobName, JobPayload } from '@countersign/contracts';
import { type Logger } from '@countersign/platform';
import { ToolCatalog } from '@countersign/shared-records';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { Metrics } from '../core/metrics';
import { ServiceAddress } from '../core/service-address';
import { LOGGER } from '../core/tokens';
import type { StoredApproval } from '../requests/approval-types';
import { RequestStore } from '../requests/request-store';
import { DeliveryLedger } from './delivery-ledger';
import { digestMail, digestSlackMessage, type Digest } from './digest-messages';
import { DigestStore, type DigestTarget } from './digest-store';
import { expiredMail, requestMail } from './email/email-messages';
import { EmailNotifier } from './email/email-notifier';
import { signLinkToken } from './email/link-token';
import { OnceOnlyDelivery, type DeliveryOutcome } from './once-only-delivery';
import { outcomeMessage, requestMessage } from './slack/slack-blocks';
import { SlackNotifier } from './slack/slack-notifier';

type Payload<K extends ApprovalServiceJobName> = JobPayload<K>;

const OPEN = ['pending', 'notice'] as const;
const isOpen = (a: StoredApproval) => a.status === 'pending' || a.status === 'notice';

/** Where a Slack message landed, as recorded with its delivery: `<channel ID> <ts>` (neither holds a space). */
const slackReceipt = (posted: { channel: string; ts: string }) => `${posted.channel} ${posted.ts}`;
function parseSlackReceipt(receipt: string): { channel: string; ts: string } {
  const [channel, ts] = receipt.split(' ');
  return { channel, ts };
}

@Injectable()
export class NotificationService {
  private readonly deliveries: OnceOnlyDelivery;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly store: RequestStore,
    private readonly ledger: DeliveryLedger,
    private readonly directory: ApproverDirectory,
    private readonly slack: SlackNotifier,
    private readonly email: EmailNotifier,
    private readonly audit: AuditTrail,
    private readonly metrics: Metrics,
    private readonly address: ServiceAddress,
    private readonly digests: DigestStore,
    private readonly tools: ToolCatalog,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.deliveries = new OnceOnlyDelivery(ledger, logger);
  }

  async notifySlack(job: Payload<'notify.slack'>): Promise<void> {
    const approval = await this.current(job);
    if (!approval || !this.slack.enabled) return;
    const delivery = { requestId: job.requestId, attempt: job.attempt, key: `slack:${job.channel}` };
    await this.describe(approval);
    // Posted only while open (settled before we got to it: nothing to show), but an earlier try's post is
    // finished below whatever the status is now.
    const outcome = await this.deliveries.deliver(delivery, OPEN, async () => {
      const posted = await this.slack.post(job.channel, requestMessage(approval, this.inboxUrl));
      return { receipt: slackReceipt(posted), slackMessage: posted };
    });
    if (outcome.status !== 'delivered') return this.notDelivered(outcome, job.callId, 'slack', job.channel);
    const posted = parseSlackReceipt(outcome.receipt);
    await this.sent(approval, 'slack', job.channel, outcome.now);
    // Settled while we were posting: the outcome job may have missed this message, so update it now.
    const after = await this.current(job);
    if (after && !isOpen(after) && after.request.reason !== 'manual_step') {
      await this.slack.update(posted.channel, posted.ts, outcomeMessage(after));
    }
  }

  async notifyEmail(job: Payload<'notify.email'>): Promise<void> {
    const approval = await this.current(job);
    const approver = this.directory.byId(job.approver);
    if (!approval || !approver?.email) return;
    const { email } = approver;
    // An email about an edited revision is a delivery of its own (and only while that revision is the one shown).
    if (job.rev > 0 && approval.edited?.rev !== job.rev) return;
    const key = `email:${approver.id}${job.rev > 0 ? `@e${job.rev}` : ''}`;
    const delivery = { requestId: job.requestId, attempt: job.attempt, key };
    await this.describe(approval);
    const outcome = await this.deliveries.deliver(delivery, OPEN, async () => {
      const token = signLinkToken(
        {
          requestId: job.requestId,
          callId: job.callId,
          attempt: job.attempt,
          approver: approver.id,
          expiresAt: approval.expiresAt,
          // Bound to what the email shows: the arguments as they are now (an earlier job may send after an edit).
          rev: approval.edited?.rev ?? 0,
        },
        this.config.env.LINK_TOKEN_SECRET,
      );
      const link = `${this.address.publicUrl}/approve/${token}`;
      await this.email.send(requestMail(approval, email, link), {
        callId: job.callId,
        runId: approval.request.runId,
      });
      return { receipt: '', emailed: approver.id };
    });
    if (outcome.status === 'in_doubt') {
      // They may have the request, so they are told if it expires (an expiry notice they can't place is harmless).
      await this.ledger.rememberEmailed(job.requestId, approver.id);
    }
    if (outcome.status !== 'delivered') return this.notDelivered(outcome, job.callId, 'email', approver.id);
    await this.sent(approval, 'email', approver.id, outcome.now);
  }

  /**
   * Every Slack message of the request now shows the outcome; an expiry is also emailed to those who were sent
   * the request (not every member of its groups: an escalated member whose email had not gone out yet never saw
   * it).
   */
  async showOutcome(job: Payload<'notify.outcome'>): Promise<void> {
    const approval = await this.current(job);
    if (!approval || isOpen(approval)) return;
    await this.describe(approval);
    for (const message of approval.slackMessages) {
      if (this.slack.enabled) await this.slack.update(message.channel, message.ts, outcomeMessage(approval));
    }
    if (approval.outcome?.decidedBy === 'expired' && approval.channels.includes('email')) {
      await this.emailExpiry(approval);
    }
  }

  /**
   * Votes were counted or the arguments edited: every Slack message of the request shows it as it is now (progress,
   * edited arguments, buttons bound to the current revision), or its outcome if it was settled meanwhile.
   */
  async showProgress(job: Payload<'notify.progress'>): Promise<void> {
    const approval = await this.current(job);
    if (!approval || !this.slack.enabled) return;
    await this.describe(approval);
    const message = isOpen(approval) ? requestMessage(approval, this.inboxUrl) : outcomeMessage(approval);
    for (const posted of approval.slackMessages) await this.slack.update(posted.channel, posted.ts, message);
  }

  private get inboxUrl(): string {
    return `${this.address.publicUrl}/inbox`;
  }

  /** What the tool does, for the message (from the tool catalog; a message without it still goes out). */
  private async describe(approval: StoredApproval): Promise<void> {
    const hash = approval.request.toolDefinitionHash;
    approval.tool = (await this.tools.get([hash]).catch(() => new Map<string, never>())).get(hash);
  }

  /**
   * The digest of one target (a Slack channel, an approver's email) for the requests of one requester in one window
   * that it was not sent one by one: how many, and a link to the inbox. Sent once, like every post and email.
   */
  async notifyDigest(job: Payload<'notify.digest'>): Promise<void> {
    const target = job.target as DigestTarget;
    const [via, to] = [target.slice(0, target.indexOf(':')), target.slice(target.indexOf(':') + 1)];
    const approver = via === 'email' ? this.directory.byId(to) : undefined;
    if (via === 'slack' ? !this.slack.enabled : !approver?.email) return;
    const ledger = this.digests.ledger(job.requester, job.windowStart, target);
    const outcome = await this.deliveries.deliverVia(ledger, async ({ count }) => {
      const digest: Digest = {
        requester: { id: job.requester, name: this.directory.byId(job.requester)?.name },
        count,
        windowStart: job.windowStart,
        windowMs: job.windowMs,
        inboxUrl: this.inboxUrl,
      };
      if (via === 'slack') {
        const posted = await this.slack.post(to, digestSlackMessage(digest));
        return { receipt: slackReceipt(posted) };
      }
      await this.email.send(digestMail(digest, approver!.email!), { requester: job.requester });
      return { receipt: '' };
    });
    const channel = via === 'slack' ? 'slack' : 'email';
    if (outcome.status === 'in_doubt') {
      return this.failed({
        channel,
        target: to,
        error: `in doubt: a try reserved the digest of ${job.requester} at ${new Date(outcome.reservedAt).toISOString()} and stopped before recording it (it may have gone out); not sent again`,
      });
    }
    if (outcome.status !== 'delivered') return;
    if (outcome.now) this.metrics.notifications.inc({ channel, result: 'digest_sent' });
    await this.audit.append({
      type: 'notification.sent',
      detail: {
        channel,
        target: to,
        digest: { requester: job.requester, window: new Date(job.windowStart).toISOString() },
      },
    });
  }

  /** Called once retries are exhausted. */
  async failed(job: { callId?: string; channel: string; target: string; error: string }): Promise<void> {
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

  /**
   * One expiry email to each approver who was emailed the request, each at most once across retries. A failed
   * one does not hold up the others; it is thrown after them, so the retry sends only what is left.
   */
  private async emailExpiry(approval: StoredApproval): Promise<void> {
    const { requestId, callId, attempt, runId, requester } = approval.request;
    let failure: unknown;
    for (const approver of approval.emailed.map((id) => this.directory.byId(id))) {
      if (!approver?.email || approver.id === requester) continue;
      const { email } = approver;
      const delivery = { requestId, attempt, key: `expiry-email:${approver.id}` };
      try {
        const outcome = await this.deliveries.deliver(delivery, ['expired'], async () => {
          await this.email.send(expiredMail(approval, email), { callId, runId });
          return { receipt: '' };
        });
        if (outcome.status !== 'delivered') await this.notDelivered(outcome, callId, 'email', approver.id);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  /** An in-doubt delivery is reported as failed for good: it is not tried again (see OnceOnlyDelivery). */
  private async notDelivered(
    outcome: Exclude<DeliveryOutcome, { status: 'delivered' }>,
    callId: string,
    channel: string,
    target: string,
  ): Promise<void> {
    if (outcome.status !== 'in_doubt') return;
    await this.failed({
      callId,
      channel,
      target,
      error:
        `in doubt: a try reserved this delivery at ${new Date(outcome.reservedAt).toISOString()} and stopped ` +
        'before recording it (it may have gone out); not sent again',
    });
  }

  private async current(job: { requestId: string; attempt: number }): Promise<StoredApproval | undefined> {
    const approval = await this.store.get(job.requestId);
    return approval && approval.request.attempt === job.attempt ? approval : undefined;
  }

  /**
   * `now`: delivered by this try (counted); false: by an earlier try whose bookkeeping stopped, maybe after this
   * audit (then the entry is written twice: an audit entry may repeat, a message may not).
   */
  private async sent(approval: StoredApproval, channel: string, target: string, now: boolean): Promise<void> {
    if (now) this.metrics.notifications.inc({ channel, result: 'sent' });
    await this.audit.append({
      type: 'notification.sent',
      callId: approval.request.callId,
      runId: approval.request.runId,
      detail: { channel, target },
    });
  }
}

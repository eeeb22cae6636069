// Consumes the notification queue: Slack posts, emails, digests and outcome updates, retried with backoff. A delivery
// that failed for good is recorded (metric, log, audit); so is a webhook (the approvals API's, see
// approval-service-jobs.ts), through failedForGood.
import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { ApprovalServiceJobName as Name, type ApprovalServiceQueueName } from '@countersign/contracts';
import type { JobCatalog } from '@countersign/platform';
import { NotificationService } from './notification.service';

/** The notification jobs this module handles: all but the approvals API's webhooks. */
export type NotificationJobs = Omit<
  JobCatalog<typeof ApprovalServiceQueueName.Notifications>,
  typeof Name.NotifyWebhook
>;

@Injectable()
export class NotificationProcessor {
  constructor(private readonly notifications: NotificationService) {}

  /** The handler of each notification job. */
  get jobs(): NotificationJobs {
    const failedForGood = this.failedForGood;
    return {
      [Name.NotifySlack]: { handle: (job) => this.notifications.notifySlack(job), failedForGood },
      [Name.NotifyEmail]: { handle: (job) => this.notifications.notifyEmail(job), failedForGood },
      [Name.ShowOutcome]: { handle: (job) => this.notifications.showOutcome(job), failedForGood },
      [Name.ShowProgress]: { handle: (job) => this.notifications.showProgress(job), failedForGood },
      [Name.NotifyDigest]: { handle: (job) => this.notifications.notifyDigest(job), failedForGood },
    };
  }

  /** Records a notification job (or a webhook) that failed for good. */
  readonly failedForGood = async (job: Job, error: Error): Promise<void> => {
    const data = (job.data ?? {}) as {
      callId?: unknown;
      channel?: unknown;
      approver?: unknown;
      target?: unknown;
    };
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    if (job.name === Name.NotifyDigest) {
      // A digest is about no one call; its target says where it went.
      const target = text(data.target) ?? '';
      return this.notifications.failed({
        channel: target.startsWith('slack:') ? 'slack' : 'email',
        target: target.slice(target.indexOf(':') + 1),
        error: error.message,
      });
    }
    await this.notifications.failed({
      callId: text(data.callId) ?? String(job.id),
      channel: channelOf(job.name),
      target: text(data.channel) ?? text(data.approver) ?? '',
      error: error.message,
    });
  };
}

function channelOf(name: string): string {
  if (name === Name.NotifyEmail) return 'email';
  if (name === Name.NotifySlack) return 'slack';
  if (name === Name.ShowProgress) return 'progress';
  return name === Name.NotifyWebhook ? 'webhook' : 'outcome';
}

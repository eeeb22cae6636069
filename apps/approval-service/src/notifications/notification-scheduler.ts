// Producer of the notification queue: Slack posts, emails and outcome updates. (Expiry and escalation timers are
// not jobs: they live in the approval state, see TimerSweep.) Every job has a deterministic ID, so notifying
// again for a redelivered request or a retried escalation adds nothing twice.
import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import {
  ApprovalServiceJobName as Job,
  ApprovalServiceQueueName,
  approvalServiceJobIds as ids,
  JobContracts,
  parseContract,
  type ApprovalServiceJobName,
  type JobPayload,
} from '@countersign/contracts';
import type { Queue } from 'bullmq';
import type { ApprovalRequest, DecidedBy } from '@countersign/contracts';
import { ApproverDirectory } from '../auth/approver-directory';
import { SlackNotifier } from '../slack/slack-notifier';

type Notice = {
  [K in ApprovalServiceJobName]: { name: K; data: JobPayload<K>; jobId: string };
}[ApprovalServiceJobName];

export interface NotifyTarget {
  requestId: string;
  callId: string;
  attempt: number;
  requester: string;
  groups: string[];
  channels: string[];
}

@Injectable()
export class NotificationScheduler {
  constructor(
    @InjectQueue(ApprovalServiceQueueName.Notifications) private readonly notifications: Queue,
    private readonly directory: ApproverDirectory,
    private readonly slack: SlackNotifier,
  ) {}

  /**
   * One Slack message per channel of the groups (groups that share a channel share the message), and one email
   * per member with an address (never the requester). The job IDs are per channel and per approver, so an
   * escalation to a group whose channel or members were already told adds nothing for them.
   */
  async notifyApprovers(target: NotifyTarget): Promise<void> {
    const { requestId, callId, attempt } = target;
    const jobs: Notice[] = [];
    if (target.channels.includes('slack')) {
      const groupOfChannel = new Map<string, string>();
      for (const groupId of target.groups) {
        const channel = this.directory.group(groupId)?.slackChannel;
        if (channel && !groupOfChannel.has(channel)) groupOfChannel.set(channel, groupId);
      }
      for (const [channel, group] of groupOfChannel) {
        jobs.push({
          name: Job.NotifySlack,
          data: { requestId, callId, attempt, group, channel },
          jobId: ids.notifySlack(requestId, attempt, channel),
        });
      }
    }
    if (target.channels.includes('email')) {
      for (const approver of this.directory.membersOf(target.groups)) {
        if (approver.email && approver.id !== target.requester) {
          jobs.push({
            name: Job.NotifyEmail,
            data: { requestId, callId, attempt, approver: approver.id },
            jobId: ids.notifyEmail(requestId, attempt, approver.id),
          });
        }
      }
    }
    await this.addAll(jobs);
  }

  /**
   * Updates every channel that showed the request with how it ended: its Slack messages, and an email to
   * each approver when it expired. Adds nothing when no such channel was routed (web-only requests: open
   * inboxes hear of the outcome over live updates). A Slack post still in flight when the request settles
   * updates its own message (NotificationService.notifySlack), so skipping is never a missed update.
   */
  async showOutcome(
    request: Pick<ApprovalRequest, 'requestId' | 'callId' | 'attempt'>,
    shown: { channels: string[]; decidedBy: DecidedBy },
  ): Promise<void> {
    if (!this.hasOutcomeToShow(shown)) return;
    const { requestId, callId, attempt } = request;
    await this.addAll([
      {
        name: Job.ShowOutcome,
        data: { requestId, callId, attempt },
        jobId: ids.showOutcome(requestId, attempt),
      },
    ]);
  }

  hasOutcomeToShow({ channels, decidedBy }: { channels: string[]; decidedBy: DecidedBy }): boolean {
    if (channels.includes('slack') && this.slack.enabled) return true;
    return decidedBy === 'expired' && channels.includes('email');
  }

  private async addAll(jobs: Notice[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.notifications.addBulk(
      jobs.map((job) => ({
        name: job.name,
        data: parseContract(JobContracts[job.name].schema, job.data, job.name),
        opts: { jobId: job.jobId },
      })),
    );
  }
}

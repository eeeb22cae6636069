// Producer of the notification queue: Slack posts, emails and outcome updates. (Expiry and escalation timers are
// not jobs: they live in the approval state, see TimerSweep.) Every job has a deterministic ID, so notifying
// again for a redelivered request or a retried escalation adds nothing twice.
import { Injectable } from '@nestjs/common';
import {
  ApprovalServiceJobName as Job,
  ApprovalServiceJobSchemas,
  approvalServiceJobIds as ids,
  parseContract,
  type ApprovalServiceJobPayloads,
} from '@countersign/contracts';
import type { Queue } from 'bullmq';
import type { DecidedBy } from '@countersign/contracts';
import { ApproverDirectory } from '../auth/approver-directory';
import { Queues } from '../core/queues';
import { SlackNotifier } from '../slack/slack-notifier';

type Notice = {
  [K in keyof ApprovalServiceJobPayloads]: { name: K; data: ApprovalServiceJobPayloads[K]; jobId: string };
}[keyof ApprovalServiceJobPayloads];

export interface NotifyTarget {
  callId: string;
  attempt: number;
  requester: string;
  groups: string[];
  channels: string[];
}

@Injectable()
export class NotificationScheduler {
  constructor(
    private readonly queues: Queues,
    private readonly directory: ApproverDirectory,
    private readonly slack: SlackNotifier,
  ) {}

  /**
   * One Slack message per channel of the groups (groups that share a channel share the message), and one email
   * per member with an address (never the requester). The job IDs are per channel and per approver, so an
   * escalation to a group whose channel or members were already told adds nothing for them.
   */
  async notifyApprovers(target: NotifyTarget): Promise<void> {
    const { callId, attempt } = target;
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
          data: { callId, attempt, group, channel },
          jobId: ids.notifySlack(callId, attempt, channel),
        });
      }
    }
    if (target.channels.includes('email')) {
      for (const approver of this.directory.membersOf(target.groups)) {
        if (approver.email && approver.id !== target.requester) {
          jobs.push({
            name: Job.NotifyEmail,
            data: { callId, attempt, approver: approver.id, rev: 0 },
            jobId: ids.notifyEmail(callId, attempt, approver.id),
          });
        }
      }
    }
    await this.addAll(this.queues.notifications, jobs);
  }

  /**
   * Updates every channel that showed the request with how it ended: its Slack messages, and an email to
   * each approver when it expired. Adds nothing when no such channel was routed (web-only requests: open
   * inboxes hear of the outcome over live updates). A Slack post still in flight when the request settles
   * updates its own message (NotificationService.notifySlack), so skipping is never a missed update.
   */
  async showOutcome(
    callId: string,
    attempt: number,
    shown: { channels: string[]; decidedBy: DecidedBy },
  ): Promise<void> {
    if (!this.hasOutcomeToShow(shown)) return;
    await this.addAll(this.queues.notifications, [
      { name: Job.ShowOutcome, data: { callId, attempt }, jobId: ids.showOutcome(callId, attempt) },
    ]);
  }

  /**
   * Votes were counted or the arguments edited (`rev` > 0 and `editedBy` set: just now): Slack messages are updated to
   * show the request as it is now, and after an edit every member with an address is emailed the edited call with a
   * link bound to its revision, except its requester and the editor (whose approval already counts). Links to the
   * earlier revision are refused from then on.
   */
  async showProgress(target: NotifyTarget & { rev: number; editedBy?: string }): Promise<void> {
    const { callId, attempt, rev } = target;
    const jobs: Notice[] = [];
    if (target.channels.includes('slack') && this.slack.enabled)
      // Repeatable (chat.update sets the same content again), so no job ID: each change gets its own update.
      jobs.push({ name: Job.ShowProgress, data: { callId, attempt }, jobId: '' });
    if (target.editedBy && rev > 0 && target.channels.includes('email')) {
      for (const approver of this.directory.membersOf(target.groups)) {
        if (!approver.email || approver.id === target.requester || approver.id === target.editedBy) continue;
        jobs.push({
          name: Job.NotifyEmail,
          data: { callId, attempt, approver: approver.id, rev },
          jobId: ids.notifyEmail(callId, attempt, approver.id, rev),
        });
      }
    }
    await this.addAll(this.queues.notifications, jobs);
  }

  hasOutcomeToShow({ channels, decidedBy }: { channels: string[]; decidedBy: DecidedBy }): boolean {
    if (channels.includes('slack') && this.slack.enabled) return true;
    return decidedBy === 'expired' && channels.includes('email');
  }

  private async addAll(queue: Queue, jobs: Notice[]): Promise<void> {
    if (jobs.length === 0) return;
    await queue.addBulk(
      jobs.map((job) => ({
        name: job.name,
        data: parseContract(ApprovalServiceJobSchemas[job.name], job.data, job.name),
        opts: job.jobId ? { jobId: job.jobId } : {},
      })),
    );
  }
}

// Producer of the notification queue: Slack posts, emails, digests and outcome updates. (Expiry and escalation timers
// are not jobs: they live in the approval state, see TimerSweep.) Every job has a deterministic ID, so notifying
// again for a redelivered request or a retried escalation adds nothing twice.
//
// Past NOTIFY_DIGEST_AFTER requests of one requester in a window, a request's posts and emails are not queued one
// by one: its targets are counted in the requester's window (DigestStore) and get one digest each when the window
// ends, so one requester cannot bury everyone else's requests in Slack and in the approvers' mailboxes. The requests
// themselves are stored, routed, shown in the inbox and decidable as usual.
import { Inject, Injectable } from '@nestjs/common';
import {
  ApprovalServiceJobName as Job,
  ApprovalServiceQueueName,
  JobContracts,
  approvalServiceJobIds as ids,
  parseContract,
  type ApprovalServiceJobName,
  type JobPayload,
} from '@countersign/contracts';
import type { ApprovalRequest, DecidedBy } from '@countersign/contracts';
import { type Logger, Queues } from '@countersign/platform';
import { ApproverDirectory } from '../auth/approver-directory';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';
import { SlackNotifier } from './slack/slack-notifier';
import { DigestStore, type DigestTarget, type NotifyPhase } from './digest-store';

/** A digest goes out this long after its window ends, so a request that arrived at the very end is counted in it. */
export const DIGEST_GRACE_MS = 1_000;

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
  /** When: the request arrived, or its escalation groups were added (each counts once towards the digest). */
  phase: NotifyPhase;
}

@Injectable()
export class NotificationScheduler {
  constructor(
    private readonly queues: Queues,
    private readonly directory: ApproverDirectory,
    private readonly slack: SlackNotifier,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly digests: DigestStore,
  ) {}

  /**
   * One Slack message per channel of the groups (groups that share a channel share the message), and one email
   * per member with an address (never the requester). The job IDs are per channel and per approver, so an
   * escalation to a group whose channel or members were already told adds nothing for them. No Slack job without
   * Slack (no SLACK_BOT_TOKEN): its handler would only read the request and return.
   */
  async notifyApprovers(target: NotifyTarget): Promise<void> {
    const { requestId, callId, attempt } = target;
    const jobs: Notice[] = [];
    if (this.postsToSlack(target.channels)) {
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
            data: { requestId, callId, attempt, approver: approver.id, rev: 0 },
            jobId: ids.notifyEmail(requestId, attempt, approver.id),
          });
        }
      }
    }
    await this.admit(target, jobs);
  }

  /** Queues the jobs, or, past the requester's NOTIFY_DIGEST_AFTER in this window, the digests of their targets. */
  private async admit(target: NotifyTarget, jobs: Notice[]): Promise<void> {
    if (jobs.length === 0) return;
    // NOTIFY_DIGEST_AFTER=off: every request is notified one by one.
    if (!this.digests.enabled) return this.addAll(target.requestId, jobs);
    const targets = jobs.map(targetOf);
    const admission = await this.digests.admit({ ...target, targets });
    if (admission.kind === 'gone') return;
    if (admission.kind === 'direct') return this.addAll(target.requestId, jobs);
    const { windowStart } = admission;
    const { windowMs } = this.digests;
    this.metrics.notifications.inc({ channel: 'digest', result: 'held' }, targets.length);
    this.logger.info(
      {
        callId: target.callId,
        requester: target.requester,
        window: new Date(windowStart).toISOString(),
        targets,
      },
      "notifications held for the requester's digest",
    );
    const delay = Math.max(0, windowStart + windowMs + DIGEST_GRACE_MS - Date.now());
    await this.addAll(
      target.requester,
      targets.map((digestTarget) => ({
        name: Job.NotifyDigest,
        data: { requester: target.requester, windowStart, windowMs, target: digestTarget },
        jobId: ids.notifyDigest(target.requester, windowStart, digestTarget),
      })),
      delay,
    );
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
    await this.addAll(requestId, [
      {
        name: Job.ShowOutcome,
        data: { requestId, callId, attempt },
        jobId: ids.showOutcome(requestId, attempt),
      },
    ]);
  }

  /**
   * Votes were counted or the arguments edited (`rev` > 0 and `editedBy` set: just now): Slack messages are updated to
   * show the request as it is now, and after an edit every member with an address is emailed the edited call with a
   * link bound to its revision, except its requester and the editor (whose approval already counts). Links to the
   * earlier revision are refused from then on. `routedFrom`: the edit routed the request anew, away from these groups,
   * to `groups`: the channels of `groups` that did not show it yet get a message of their own, as for a new request.
   */
  async showProgress(
    target: Omit<NotifyTarget, 'phase'> & { rev: number; editedBy?: string; routedFrom?: string[] },
  ): Promise<void> {
    const { requestId, callId, attempt, rev } = target;
    const jobs: Notice[] = [];
    if (this.postsToSlack(target.channels))
      // Repeatable (chat.update sets the same content again), so no job ID: each change gets its own update.
      jobs.push({ name: Job.ShowProgress, data: { requestId, callId, attempt }, jobId: '' });
    if (target.routedFrom && this.postsToSlack(target.channels)) jobs.push(...this.newSlackPosts(target));
    if (target.editedBy && rev > 0 && target.channels.includes('email')) {
      for (const approver of this.directory.membersOf(target.groups)) {
        if (!approver.email || approver.id === target.requester || approver.id === target.editedBy) continue;
        jobs.push({
          name: Job.NotifyEmail,
          data: { requestId, callId, attempt, approver: approver.id, rev },
          jobId: ids.notifyEmail(requestId, attempt, approver.id, rev),
        });
      }
    }
    // Not through the digest: an approver's edit, not the requester, asks them (and edits are rate-limited as votes).
    await this.addAll(requestId, jobs);
  }

  /** A Slack post in each channel of `target.groups` that no group of `routedFrom` posts in. */
  private newSlackPosts(target: Omit<NotifyTarget, 'phase'> & { routedFrom?: string[] }): Notice[] {
    const { requestId, callId, attempt } = target;
    const shown = new Set((target.routedFrom ?? []).map((g) => this.directory.group(g)?.slackChannel));
    const posts = new Map<string, string>();
    for (const group of target.groups) {
      const channel = this.directory.group(group)?.slackChannel;
      if (channel && !shown.has(channel) && !posts.has(channel)) posts.set(channel, group);
    }
    return [...posts].map(([channel, group]) => ({
      name: Job.NotifySlack,
      data: { requestId, callId, attempt, group, channel },
      jobId: ids.notifySlack(requestId, attempt, channel),
    }));
  }

  hasOutcomeToShow({ channels, decidedBy }: { channels: string[]; decidedBy: DecidedBy }): boolean {
    if (this.postsToSlack(channels)) return true;
    return decidedBy === 'expired' && channels.includes('email');
  }

  /** Whether a request routed over `channels` is posted to Slack: routed there, and Slack configured. */
  private postsToSlack(channels: string[]): boolean {
    return channels.includes('slack') && this.slack.enabled;
  }

  /** `shardKey`: the request's ID (a digest's: its requester), whose queue shard carries the jobs. */
  private async addAll(shardKey: string, jobs: Notice[], delay?: number): Promise<void> {
    if (jobs.length === 0) return;
    await this.queues.forKey(ApprovalServiceQueueName.Notifications, shardKey).addBulk(
      jobs.map((job) => ({
        name: job.name,
        data: parseContract(JobContracts[job.name].schema, job.data, job.name),
        // A job without an ID (a repeatable update) gets one from BullMQ.
        opts: { ...(job.jobId ? { jobId: job.jobId } : {}), ...(delay ? { delay } : {}) },
      })),
    );
  }
}

/** Where a Slack or email job delivers. */
function targetOf(job: Notice): DigestTarget {
  if (job.name === Job.NotifySlack) return `slack:${job.data.channel}`;
  if (job.name === Job.NotifyEmail) return `email:${job.data.approver}`;
  throw new Error(`${job.name} is not a notification of approvers`);
}

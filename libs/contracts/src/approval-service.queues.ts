// The approval service's own queue (notification delivery): its names, the payload schemas of its jobs (listed in
// the job catalog, job-contracts.ts) and their job IDs. Expiry and escalation are not jobs: they are due timers in
// the approval state, swept by every replica (see the approval service's TimerSweep).
import { z } from 'zod';
import { IdSchema } from './common.schema';
import { JobName, QueueName } from './queues';

/** The approval service's own part of QueueName. */
export const ApprovalServiceQueueName = { Notifications: QueueName.ApprovalNotifications } as const;
export type ApprovalServiceQueueName =
  (typeof ApprovalServiceQueueName)[keyof typeof ApprovalServiceQueueName];

/** The approval service's own part of JobName. */
export const ApprovalServiceJobName = {
  NotifySlack: JobName.NotifySlack,
  NotifyEmail: JobName.NotifyEmail,
  ShowOutcome: JobName.ShowOutcome,
  /** Votes were counted or the arguments edited: Slack messages show the request as it is now. */
  ShowProgress: JobName.ShowProgress,
  /** The decision of an external approval, POSTed (signed) to the webhook its client gave. */
  NotifyWebhook: JobName.NotifyWebhook,
  NotifyDigest: JobName.NotifyDigest,
} as const;
export type ApprovalServiceJobName = (typeof ApprovalServiceJobName)[keyof typeof ApprovalServiceJobName];

/** One request (its state is keyed by request ID); the call ID is there for logs and the audit. */
const RequestRefSchema = z.object({
  requestId: IdSchema,
  callId: IdSchema,
  attempt: z.number().int().min(0).max(100),
});

export const NotifySlackJobSchema = RequestRefSchema.extend({
  group: IdSchema,
  channel: z.string().min(1).max(80),
});
export const NotifyEmailJobSchema = RequestRefSchema.extend({
  approver: IdSchema,
  /** The revision of the arguments the email asks about (an approver edited them); 0 as the agent asked. */
  rev: z.number().int().min(0).max(1_000).default(0),
});
/** Tell every channel that showed the request how it ended (Slack messages updated, an email on expiry). */
export const ShowOutcomeJobSchema = RequestRefSchema;
/** Show a pending request as it is now (votes counted, arguments edited) where it was posted. */
export const ShowProgressJobSchema = RequestRefSchema;
/** `requestId` and `callId` are the external approval's ID. */
export const NotifyWebhookJobSchema = RequestRefSchema;

/**
 * One requester's digest for one target, due when the requester's window ends: how many of their requests in that
 * window the target was not sent one by one (NOTIFY_DIGEST_AFTER). `target`: `slack:<channel>` or `email:<approver>`.
 */
export const NotifyDigestJobSchema = z.object({
  requester: IdSchema,
  windowStart: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  windowMs: z.number().int().min(1_000),
  target: z
    .string()
    .max(200)
    .regex(/^(slack|email):[^,]+$/, 'must be slack:<channel> or email:<approver>'),
});

const suffix = (attempt: number) => (attempt === 0 ? '' : `-r${attempt}`);

/** Deterministic job IDs, per request (no ':' — BullMQ forbids it in custom IDs). */
export const approvalServiceJobIds = {
  /** One per channel, whichever of the request's groups posts there (percent-encoded: distinct channels, distinct IDs). */
  notifySlack: (requestId: string, attempt: number, channel: string) =>
    `slack-${requestId}${suffix(attempt)}-${encodeURIComponent(channel)}`,
  /** `rev`: an email about edited arguments (each revision is asked about once). */
  notifyEmail: (requestId: string, attempt: number, approver: string, rev = 0) =>
    `email-${requestId}${suffix(attempt)}-${approver}${rev === 0 ? '' : `-e${rev}`}`,
  showOutcome: (requestId: string, attempt: number) => `outcome-${requestId}${suffix(attempt)}`,
  notifyWebhook: (requestId: string, attempt: number) => `webhook-${requestId}${suffix(attempt)}`,
  /** One per requester, window and target (percent-encoded: no ':'). */
  notifyDigest: (requester: string, windowStart: number, target: string) =>
    `digest-${requester}-${windowStart}-${encodeURIComponent(target)}`,
};

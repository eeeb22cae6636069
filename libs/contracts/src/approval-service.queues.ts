// The approval service's internal queue (notification delivery) and its message catalog. Expiry and escalation
// are not jobs: they are due timers in the approval state, swept by every replica (see the approval service's
// TimerSweep).
import { z } from 'zod';
import { IdSchema } from './common.schema';

export const ApprovalServiceQueueName = {
  /** Slack and email delivery, retried with backoff so an outage never delays or loses a request. */
  Notifications: 'approval-notifications',
} as const;
export type ApprovalServiceQueueName =
  (typeof ApprovalServiceQueueName)[keyof typeof ApprovalServiceQueueName];

export const ApprovalServiceJobName = {
  NotifySlack: 'notify.slack',
  NotifyEmail: 'notify.email',
  ShowOutcome: 'notify.outcome',
  /** The decision of an external approval, POSTed (signed) to the webhook its client gave. */
  NotifyWebhook: 'notify.webhook',
} as const;
export type ApprovalServiceJobName = (typeof ApprovalServiceJobName)[keyof typeof ApprovalServiceJobName];

const CallRefSchema = z.object({ callId: IdSchema, attempt: z.number().int().min(0).max(100) });

export const NotifySlackJobSchema = CallRefSchema.extend({
  group: IdSchema,
  channel: z.string().min(1).max(80),
});
export const NotifyEmailJobSchema = CallRefSchema.extend({ approver: IdSchema });
/** Tell every channel that showed the request how it ended (Slack messages updated, an email on expiry). */
export const ShowOutcomeJobSchema = CallRefSchema;
/** `callId` is the external approval's ID. */
export const NotifyWebhookJobSchema = CallRefSchema;

/** Job name → payload schema: producers parse before add, processors safeParse before work. */
export const ApprovalServiceJobSchemas = {
  [ApprovalServiceJobName.NotifySlack]: NotifySlackJobSchema,
  [ApprovalServiceJobName.NotifyEmail]: NotifyEmailJobSchema,
  [ApprovalServiceJobName.ShowOutcome]: ShowOutcomeJobSchema,
  [ApprovalServiceJobName.NotifyWebhook]: NotifyWebhookJobSchema,
} as const;
export type ApprovalServiceJobPayloads = {
  [K in ApprovalServiceJobName]: z.infer<(typeof ApprovalServiceJobSchemas)[K]>;
};

/** Which job names each internal queue carries. */
export const ApprovalServiceQueueJobs = {
  [ApprovalServiceQueueName.Notifications]: [
    ApprovalServiceJobName.NotifySlack,
    ApprovalServiceJobName.NotifyEmail,
    ApprovalServiceJobName.ShowOutcome,
    ApprovalServiceJobName.NotifyWebhook,
  ],
} as const satisfies Record<ApprovalServiceQueueName, readonly ApprovalServiceJobName[]>;

const suffix = (attempt: number) => (attempt === 0 ? '' : `-r${attempt}`);

/** Deterministic job IDs (no ':' — BullMQ forbids it in custom IDs). */
export const approvalServiceJobIds = {
  /** One per channel, whichever of the request's groups posts there (percent-encoded: distinct channels, distinct IDs). */
  notifySlack: (callId: string, attempt: number, channel: string) =>
    `slack-${callId}${suffix(attempt)}-${encodeURIComponent(channel)}`,
  notifyEmail: (callId: string, attempt: number, approver: string) =>
    `email-${callId}${suffix(attempt)}-${approver}`,
  showOutcome: (callId: string, attempt: number) => `outcome-${callId}${suffix(attempt)}`,
  notifyWebhook: (callId: string, attempt: number) => `webhook-${callId}${suffix(attempt)}`,
};

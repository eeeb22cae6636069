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
  /** Votes were counted or the arguments edited: Slack messages show the request as it is now. */
  ShowProgress: 'notify.progress',
} as const;
export type ApprovalServiceJobName = (typeof ApprovalServiceJobName)[keyof typeof ApprovalServiceJobName];

const CallRefSchema = z.object({ callId: IdSchema, attempt: z.number().int().min(0).max(100) });

export const NotifySlackJobSchema = CallRefSchema.extend({
  group: IdSchema,
  channel: z.string().min(1).max(80),
});
export const NotifyEmailJobSchema = CallRefSchema.extend({
  approver: IdSchema,
  /** The revision of the arguments the email asks about (an approver edited them); 0 as the agent asked. */
  rev: z.number().int().min(0).max(1_000).default(0),
});
/** Tell every channel that showed the request how it ended (Slack messages updated, an email on expiry). */
export const ShowOutcomeJobSchema = CallRefSchema;
export const ShowProgressJobSchema = CallRefSchema;

/** Job name → payload schema: producers parse before add, processors safeParse before work. */
export const ApprovalServiceJobSchemas = {
  [ApprovalServiceJobName.NotifySlack]: NotifySlackJobSchema,
  [ApprovalServiceJobName.NotifyEmail]: NotifyEmailJobSchema,
  [ApprovalServiceJobName.ShowOutcome]: ShowOutcomeJobSchema,
  [ApprovalServiceJobName.ShowProgress]: ShowProgressJobSchema,
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
    ApprovalServiceJobName.ShowProgress,
  ],
} as const satisfies Record<ApprovalServiceQueueName, readonly ApprovalServiceJobName[]>;

const suffix = (attempt: number) => (attempt === 0 ? '' : `-r${attempt}`);

/** Deterministic job IDs (no ':' — BullMQ forbids it in custom IDs). */
export const approvalServiceJobIds = {
  /** One per channel, whichever of the request's groups posts there (percent-encoded: distinct channels, distinct IDs). */
  notifySlack: (callId: string, attempt: number, channel: string) =>
    `slack-${callId}${suffix(attempt)}-${encodeURIComponent(channel)}`,
  notifyEmail: (callId: string, attempt: number, approver: string, rev = 0) =>
    `email-${callId}${suffix(attempt)}-${approver}${rev === 0 ? '' : `-e${rev}`}`,
  showOutcome: (callId: string, attempt: number) => `outcome-${callId}${suffix(attempt)}`,
};

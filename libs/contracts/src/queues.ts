// Every queue and job name of both apps. The agent-runs, approval-requests and approval-decisions queues are the
// contract between the agent workers and the approval service; approval-notifications is the approval service's
// own. Which queue carries each job, and the schema of its payload, is the job catalog (job-contracts.ts).

/** The braces make a Redis Cluster hash tag, so every key of every queue lands on one slot. */
export const DEFAULT_QUEUE_PREFIX = '{countersign}';

export const QueueName = {
  AgentRuns: 'agent-runs',
  ApprovalRequests: 'approval-requests',
  ApprovalDecisions: 'approval-decisions',
  /** Slack and email delivery, retried with backoff so an outage never delays or loses a request. */
  ApprovalNotifications: 'approval-notifications',
} as const;

export const JobName = {
  StartRun: 'run.start',
  RequestApproval: 'approval.request',
  Decision: 'approval.decision',
  /** A person did a manual step (see manual-step.schema.ts); rides the decisions queue to the run's worker. */
  ManualStepDone: 'approval.manual-step-done',
  NotifySlack: 'notify.slack',
  NotifyEmail: 'notify.email',
  ShowOutcome: 'notify.outcome',
  /** Votes were counted or the arguments edited: Slack messages show the request as it is now. */
  ShowProgress: 'notify.progress',
  NotifyWebhook: 'notify.webhook',
  NotifyDigest: 'notify.digest',
} as const;

export type QueueName = (typeof QueueName)[keyof typeof QueueName];
export type JobName = (typeof JobName)[keyof typeof JobName];

/** Deterministic job IDs: a retried publish never duplicates a message. BullMQ forbids ':' in custom IDs. */
export const jobIds = {
  startRun: (runId: string) => `run-${runId}`,
  /** By request ID: a new request (a re-ask, a reused call ID) is a new job, a republished one is the same job. */
  approvalRequest: (requestId: string) => requestId,
  decision: (requestId: string) => `decision-${requestId}`,
  /** A notice (one request) is done once. */
  manualStepDone: (requestId: string) => `manual-done-${requestId}`,
};

// Queue names, job names and the name → payload map: the contract between producers and consumers.
import type { z } from 'zod';
import type { StartRunJobSchema } from './runs.schema';
import type { ApprovalRequestSchema } from './approval-request.schema';
import type { SignedDecisionSchema } from './decision.schema';
import type { SignedManualStepDoneSchema } from './manual-step.schema';

/** The braces make a Redis Cluster hash tag, so every key of every queue lands on one slot. */
export const DEFAULT_QUEUE_PREFIX = '{countersign}';

export const QueueName = {
  AgentRuns: 'agent-runs',
  ApprovalRequests: 'approval-requests',
  ApprovalDecisions: 'approval-decisions',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

export const JobName = {
  StartRun: 'run.start',
  RequestApproval: 'approval.request',
  Decision: 'approval.decision',
  /** A person did a manual step (see manual-step.schema.ts); rides the decisions queue to the run's worker. */
  ManualStepDone: 'approval.manual-step-done',
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];

/** Which job names each public queue carries. */
export const QueueJobs = {
  [QueueName.AgentRuns]: [JobName.StartRun],
  [QueueName.ApprovalRequests]: [JobName.RequestApproval],
  [QueueName.ApprovalDecisions]: [JobName.Decision, JobName.ManualStepDone],
} as const satisfies Record<QueueName, readonly JobName[]>;

export interface JobPayloads {
  [JobName.StartRun]: z.infer<typeof StartRunJobSchema>;
  [JobName.RequestApproval]: z.infer<typeof ApprovalRequestSchema>;
  [JobName.Decision]: z.infer<typeof SignedDecisionSchema>;
  [JobName.ManualStepDone]: z.infer<typeof SignedManualStepDoneSchema>;
}

/** Deterministic job IDs: a retried publish never duplicates a message. BullMQ forbids ':' in custom IDs. */
export const jobIds = {
  startRun: (runId: string) => `run-${runId}`,
  approvalRequest: (callId: string, attempt = 0) => (attempt === 0 ? callId : `${callId}-r${attempt}`),
  decision: (callId: string, attempt = 0) =>
    attempt === 0 ? `decision-${callId}` : `decision-${callId}-r${attempt}`,
  /** A notice is done once. */
  manualStepDone: (callId: string) => `manual-done-${callId}`,
};

// The public queues and their job names: the contract between the agent workers and the approval service.
// Which schema each job's payload must match is in the job catalog (job-contracts.ts).

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
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];

/** Deterministic job IDs: a retried publish never duplicates a message. BullMQ forbids ':' in custom IDs. */
export const jobIds = {
  startRun: (runId: string) => `run-${runId}`,
  approvalRequest: (callId: string, attempt = 0) => (attempt === 0 ? callId : `${callId}-r${attempt}`),
  decision: (callId: string, attempt = 0) =>
    attempt === 0 ? `decision-${callId}` : `decision-${callId}-r${attempt}`,
};

// The job catalog of both apps: every job name, the queue that carries it and the schema of its payload.
// Producers parse against it before they add; the queue module validates every job against it before its
// handler runs, and checks at start-up that each job of a consumed queue has a handler.
import type { z } from 'zod';
import { ApprovalRequestSchema } from './approval-request.schema';
import {
  NotifyDigestJobSchema,
  NotifyEmailJobSchema,
  NotifySlackJobSchema,
  NotifyWebhookJobSchema,
  ShowOutcomeJobSchema,
} from './approval-service.queues';
import { SignedDecisionSchema } from './decision.schema';
import { JobName, QueueName } from './queues';
import { StartRunJobSchema } from './runs.schema';

export interface JobContract {
  queue: QueueName;
  schema: z.ZodType;
}

export const JobContracts = {
  [JobName.StartRun]: { queue: QueueName.AgentRuns, schema: StartRunJobSchema },
  [JobName.RequestApproval]: { queue: QueueName.ApprovalRequests, schema: ApprovalRequestSchema },
  [JobName.Decision]: { queue: QueueName.ApprovalDecisions, schema: SignedDecisionSchema },
  [JobName.NotifySlack]: { queue: QueueName.ApprovalNotifications, schema: NotifySlackJobSchema },
  [JobName.NotifyEmail]: { queue: QueueName.ApprovalNotifications, schema: NotifyEmailJobSchema },
  [JobName.ShowOutcome]: { queue: QueueName.ApprovalNotifications, schema: ShowOutcomeJobSchema },
  [JobName.NotifyWebhook]: { queue: QueueName.ApprovalNotifications, schema: NotifyWebhookJobSchema },
  [JobName.NotifyDigest]: { queue: QueueName.ApprovalNotifications, schema: NotifyDigestJobSchema },
} as const satisfies Record<JobName, JobContract>;

/** A job's payload as its consumer gets it (parsed, defaults filled in). */
export type JobPayload<N extends JobName> = z.output<(typeof JobContracts)[N]['schema']>;

/** The job names a queue carries. */
export type JobsOn<Q extends QueueName> = {
  [N in JobName]: (typeof JobContracts)[N]['queue'] extends Q ? N : never;
}[JobName];

export function jobsOn(queue: QueueName): JobName[] {
  return (Object.keys(JobContracts) as JobName[]).filter((name) => JobContracts[name].queue === queue);
}

export function isJobName(name: string): name is JobName {
  return Object.hasOwn(JobContracts, name);
}

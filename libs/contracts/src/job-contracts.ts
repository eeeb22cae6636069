// The job catalog of both apps: every job name, the queue that carries it and the schema of its payload.
// Producers parse against it before they add; the queue module validates every job against it before its
// handler runs, and checks at start-up that each job of a consumed queue has a handler.
import type { z } from 'zod';
import { ApprovalRequestSchema, withRequestedAt } from './approval-request.schema';
import {
  NotifyDigestJobSchema,
  NotifyEmailJobSchema,
  NotifySlackJobSchema,
  NotifyWebhookJobSchema,
  ShowOutcomeJobSchema,
  ShowProgressJobSchema,
} from './approval-service.queues';
import { SignedDecisionSchema } from './decision.schema';
import { SignedManualStepDoneSchema } from './manual-step.schema';
import { JobName, QueueName } from './queues';
import { StartRunJobSchema } from './runs.schema';

export interface JobContract {
  queue: QueueName;
  schema: z.ZodType;
  /**
   * Puts back, before the payload is validated, what the producer left out because the job itself carries it (the
   * job's timestamp).
   * @defaultValue the payload as queued
   */
  withJobFields?: (data: unknown, jobTimestamp: number) => unknown;
}

export const JobContracts = {
  [JobName.StartRun]: { queue: QueueName.AgentRuns, schema: StartRunJobSchema },
  [JobName.RequestApproval]: {
    queue: QueueName.ApprovalRequests,
    schema: ApprovalRequestSchema,
    // The agent worker leaves requestedAt out: the job was added when the call was parked.
    withJobFields: withRequestedAt,
  },
  [JobName.Decision]: { queue: QueueName.ApprovalDecisions, schema: SignedDecisionSchema },
  [JobName.ManualStepDone]: { queue: QueueName.ApprovalDecisions, schema: SignedManualStepDoneSchema },
  [JobName.NotifySlack]: { queue: QueueName.ApprovalNotifications, schema: NotifySlackJobSchema },
  [JobName.NotifyEmail]: { queue: QueueName.ApprovalNotifications, schema: NotifyEmailJobSchema },
  [JobName.ShowOutcome]: { queue: QueueName.ApprovalNotifications, schema: ShowOutcomeJobSchema },
  [JobName.ShowProgress]: { queue: QueueName.ApprovalNotifications, schema: ShowProgressJobSchema },
  [JobName.NotifyWebhook]: { queue: QueueName.ApprovalNotifications, schema: NotifyWebhookJobSchema },
  [JobName.NotifyDigest]: { queue: QueueName.ApprovalNotifications, schema: NotifyDigestJobSchema },
} as const satisfies Record<JobName, JobContract>;

/** A queued job's payload as its contract validates it: with what the producer left to the job put back. */
export function payloadOf(name: JobName, job: { data: unknown; timestamp: number }): unknown {
  const contract: JobContract = JobContracts[name];
  return contract.withJobFields ? contract.withJobFields(job.data, job.timestamp) : job.data;
}

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

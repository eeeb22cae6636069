// The job catalog of both apps: every job name, the queue that carries it and the schema of its payload.
// Producers parse against it before they add; the queue module validates every job against it before its
// handler runs, and checks at start-up that each job of a consumed queue has a handler.
import type { z } from 'zod';
import { ApprovalRequestSchema } from './approval-request.schema';
import {
  ApprovalServiceJobName,
  ApprovalServiceQueueName,
  NotifyEmailJobSchema,
  NotifySlackJobSchema,
  ShowOutcomeJobSchema,
} from './approval-service.queues';
import { SignedDecisionSchema } from './decision.schema';
import { JobName, QueueName } from './queues';
import { StartRunJobSchema } from './runs.schema';

/** Every queue of both apps: the public ones and the approval service's own. */
export type AnyQueueName = QueueName | ApprovalServiceQueueName;
/** Every job name of both apps. */
export type AnyJobName = JobName | ApprovalServiceJobName;

export interface JobContract {
  queue: AnyQueueName;
  schema: z.ZodType;
}

export const JobContracts = {
  [JobName.StartRun]: { queue: QueueName.AgentRuns, schema: StartRunJobSchema },
  [JobName.RequestApproval]: { queue: QueueName.ApprovalRequests, schema: ApprovalRequestSchema },
  [JobName.Decision]: { queue: QueueName.ApprovalDecisions, schema: SignedDecisionSchema },
  [ApprovalServiceJobName.NotifySlack]: {
    queue: ApprovalServiceQueueName.Notifications,
    schema: NotifySlackJobSchema,
  },
  [ApprovalServiceJobName.NotifyEmail]: {
    queue: ApprovalServiceQueueName.Notifications,
    schema: NotifyEmailJobSchema,
  },
  [ApprovalServiceJobName.ShowOutcome]: {
    queue: ApprovalServiceQueueName.Notifications,
    schema: ShowOutcomeJobSchema,
  },
} as const satisfies Record<AnyJobName, JobContract>;

/** A job's payload as its consumer gets it (parsed, defaults filled in). */
export type JobPayload<N extends AnyJobName> = z.output<(typeof JobContracts)[N]['schema']>;

/** The job names a queue carries. */
export type JobsOn<Q extends AnyQueueName> = {
  [N in AnyJobName]: (typeof JobContracts)[N]['queue'] extends Q ? N : never;
}[AnyJobName];

export function jobsOn(queue: AnyQueueName): AnyJobName[] {
  return (Object.keys(JobContracts) as AnyJobName[]).filter((name) => JobContracts[name].queue === queue);
}

export function isJobName(name: string): name is AnyJobName {
  return Object.hasOwn(JobContracts, name);
}

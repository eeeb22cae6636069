// Typed producers: each message is parsed against its contract before it is added, with a
// deterministic job ID so a retried publish never duplicates it (a request's job ID is its request ID). A run's jobs
// ride the queue shard of its run ID (queue-shards.ts in libs/platform).
import { Inject, Injectable } from '@nestjs/common';
import { Queues } from '@countersign/platform';
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  JobName,
  jobIds,
  parseContract,
  QueueName,
  type StartRunJob,
  StartRunJobSchema,
} from '@countersign/contracts';

@Injectable()
export class ApprovalRequestsProducer {
  constructor(@Inject(Queues) private readonly queues: Queues) {}

  async requestApproval(request: ApprovalRequest): Promise<void> {
    const message = parseContract(ApprovalRequestSchema, request, JobName.RequestApproval);
    await this.queues
      .forKey(QueueName.ApprovalRequests, message.runId)
      .add(JobName.RequestApproval, withoutDefaults(message), {
        jobId: jobIds.approvalRequest(message.requestId),
      });
  }
}

/**
 * A request job waits in Redis as long as its approvers take (one per parked call): fields still at their
 * schema default are left out, and the consumer's parse puts them back; `requestedAt` is the job's timestamp.
 */
function withoutDefaults(message: ApprovalRequest): Partial<ApprovalRequest> {
  const { toolDescription, reason, attempt, tier, requestedAt: _sameAsJobTimestamp, ...rest } = message;
  return {
    ...rest,
    ...(tier !== 'confirm' ? { tier } : {}),
    ...(toolDescription ? { toolDescription } : {}),
    ...(reason !== 'confirmation_required' ? { reason } : {}),
    ...(attempt !== 0 ? { attempt } : {}),
  };
}

/** A run that no worker has claimed yet, as its start job tells it. */
export interface QueuedStart {
  job: StartRunJob;
  /** Set when the start job failed for good before any worker claimed the run. */
  failedReason?: string;
}

@Injectable()
export class RunsProducer {
  constructor(@Inject(Queues) private readonly queues: Queues) {}

  async startRun(job: StartRunJob): Promise<void> {
    const message = parseContract(StartRunJobSchema, job, JobName.StartRun);
    await this.queues
      .forKey(QueueName.AgentRuns, message.runId)
      .add(JobName.StartRun, message, { jobId: jobIds.startRun(message.runId) });
  }

  /** The start job of a run not claimed yet; undefined when there is none (or it is not a valid start). */
  async findStart(runId: string): Promise<QueuedStart | undefined> {
    const job = await this.queues.forKey(QueueName.AgentRuns, runId).getJob(jobIds.startRun(runId));
    const parsed = StartRunJobSchema.safeParse(job?.data);
    if (!job || !parsed.success || parsed.data.runId !== runId) return undefined;
    // In the failed set only once no retry is left (an unrecoverable error gets none); a retry waits as delayed.
    const failedForGood = Boolean(job.failedReason) && (await job.isFailed());
    return { job: parsed.data, ...(failedForGood ? { failedReason: job.failedReason } : {}) };
  }
}

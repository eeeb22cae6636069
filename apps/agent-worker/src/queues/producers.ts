// Typed producers: each message is parsed against its contract before it is added, with a
// deterministic job ID so a retried publish never duplicates it.
import type { Queue } from 'bullmq';
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  JobName,
  jobIds,
  parseContract,
  type StartRunJob,
  StartRunJobSchema,
} from '@countersign/contracts';

export class ApprovalRequestsProducer {
  constructor(private readonly queue: Queue) {}

  async requestApproval(request: ApprovalRequest): Promise<void> {
    const message = parseContract(ApprovalRequestSchema, request, JobName.RequestApproval);
    await this.queue.add(JobName.RequestApproval, message, {
      jobId: jobIds.approvalRequest(message.callId, message.attempt),
    });
  }
}

export class RunsProducer {
  constructor(private readonly queue: Queue) {}

  async startRun(job: StartRunJob): Promise<void> {
    const message = parseContract(StartRunJobSchema, job, JobName.StartRun);
    await this.queue.add(JobName.StartRun, message, { jobId: jobIds.startRun(message.runId) });
  }
}

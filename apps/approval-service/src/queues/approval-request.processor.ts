// Consumes `approval-requests`. A malformed message is kept in the failed set with the bad fields named.
import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import {
  ApprovalRequestSchema,
  ContractValidationError,
  JobName,
  parseContract,
  QueueName,
  withRequestedAt,
} from '@countersign/contracts';
import { ApprovalsService, RequestRejectedError } from '../approvals/approvals.service';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { QueueProcessor } from './queue-processor';

@Injectable()
export class ApprovalRequestProcessor implements QueueProcessor {
  readonly queueName = QueueName.ApprovalRequests;
  readonly concurrency: number;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    private readonly approvals: ApprovalsService,
  ) {
    this.concurrency = env.REQUEST_CONCURRENCY;
  }

  async process(job: Job): Promise<void> {
    if (job.name !== JobName.RequestApproval)
      throw new UnrecoverableError(`unknown job name "${job.name}" on ${this.queueName}`);
    try {
      // The worker leaves requestedAt out: the job was added when the call was parked.
      const data = withRequestedAt(job.data, job.timestamp);
      await this.approvals.receive(parseContract(ApprovalRequestSchema, data, 'approval request'));
    } catch (error) {
      if (error instanceof ContractValidationError || error instanceof RequestRejectedError)
        throw new UnrecoverableError(error.message);
      throw error;
    }
  }
}

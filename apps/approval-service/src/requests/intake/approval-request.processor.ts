// Consumes `approval-requests`. A malformed message is kept in the failed set with the bad fields named (the
// queue module validates it first, with requestedAt taken from the job's timestamp when the worker left it out);
// one that can never be shown faithfully fails for good too.
import { Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { type ApprovalRequest, ContractValidationError, JobName } from '@countersign/contracts';
import type { JobHandler } from '@countersign/platform';
import { RequestIntake, RequestRejectedError } from './request-intake';

@Injectable()
export class ApprovalRequestProcessor implements JobHandler<typeof JobName.RequestApproval> {
  constructor(private readonly intake: RequestIntake) {}

  async handle(request: ApprovalRequest): Promise<void> {
    try {
      await this.intake.receive(request);
    } catch (error) {
      if (error instanceof ContractValidationError || error instanceof RequestRejectedError)
        throw new UnrecoverableError(error.message);
      throw error;
    }
  }
}

// Consumes the timer queue: delayed expiry and escalation jobs.
import { Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { ApprovalServiceJobName as Name, ApprovalServiceQueueName } from '@countersign/contracts';
import { ApprovalsService } from '../approvals/approvals.service';
import { validate } from './notification.processor';
import type { QueueProcessor } from './queue-processor';

type TimerJobName = typeof Name.Expire | typeof Name.Escalate;

@Injectable()
export class TimerProcessor implements QueueProcessor {
  readonly queueName = ApprovalServiceQueueName.Timers;
  readonly concurrency = 8;

  constructor(private readonly approvals: ApprovalsService) {}

  async process(job: Job): Promise<void> {
    const name = job.name as TimerJobName;
    switch (name) {
      case Name.Expire: {
        const { callId, attempt } = validate(job, name);
        return this.approvals.expire(callId, attempt);
      }
      case Name.Escalate: {
        const { callId, attempt, groups } = validate(job, name);
        return this.approvals.escalate(callId, attempt, groups);
      }
      default: {
        const unknown: never = name;
        throw new UnrecoverableError(`unknown job name "${String(unknown)}" on ${this.queueName}`);
      }
    }
  }
}

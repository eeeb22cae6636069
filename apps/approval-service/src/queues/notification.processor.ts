// Consumes the notification queue: Slack posts, emails and outcome updates, retried with backoff.
import { Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import {
  ApprovalServiceJobName as Name,
  ApprovalServiceJobSchemas,
  ApprovalServiceQueueName,
  ContractValidationError,
  parseContract,
  type ApprovalServiceJobName,
  type ApprovalServiceJobPayloads,
} from '@countersign/contracts';
import { NotificationService } from '../notifications/notification.service';
import type { QueueProcessor } from './queue-processor';

type NotificationJobName =
  typeof Name.NotifySlack | typeof Name.NotifyEmail | typeof Name.ShowOutcome | typeof Name.ShowProgress;

@Injectable()
export class NotificationProcessor implements QueueProcessor {
  readonly queueName = ApprovalServiceQueueName.Notifications;
  readonly concurrency = 16;

  constructor(private readonly notifications: NotificationService) {}

  async process(job: Job): Promise<void> {
    const name = job.name as NotificationJobName;
    switch (name) {
      case Name.NotifySlack:
        return this.notifications.notifySlack(validate(job, name));
      case Name.NotifyEmail:
        return this.notifications.notifyEmail(validate(job, name));
      case Name.ShowOutcome:
        return this.notifications.showOutcome(validate(job, name));
      case Name.ShowProgress:
        return this.notifications.showProgress(validate(job, name));
      default: {
        const unknown: never = name;
        throw new UnrecoverableError(`unknown job name "${String(unknown)}" on ${this.queueName}`);
      }
    }
  }

  async onFailed(job: Job, error: Error, final: boolean): Promise<void> {
    if (!final) return;
    const data = job.data as { callId?: string; channel?: string; approver?: string };
    await this.notifications.failed({
      callId: String(data.callId ?? job.id),
      channel:
        job.name === Name.NotifyEmail
          ? 'email'
          : job.name === Name.NotifySlack
            ? 'slack'
            : job.name === Name.ShowProgress
              ? 'progress'
              : 'outcome',
      target: data.channel ?? data.approver ?? '',
      error: error.message,
    });
  }
}

export function validate<K extends ApprovalServiceJobName>(job: Job, name: K): ApprovalServiceJobPayloads[K] {
  try {
    return parseContract(ApprovalServiceJobSchemas[name], job.data, name) as ApprovalServiceJobPayloads[K];
  } catch (error) {
    if (error instanceof ContractValidationError) throw new UnrecoverableError(error.message);
    throw error;
  }
}

// The approval service's queues: it publishes decisions and notifications (producer), and works on approval
// requests and notifications (one worker each, with the handler of every job they carry).
import { ApprovalServiceQueueName, JobName, QueueName } from '@countersign/contracts';
import type { JobCatalog, Logger, QueueModuleOptions } from '@countersign/platform';
import type { ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalRequestProcessor } from './approval-request.processor';
import type { NotificationProcessor } from './notification.processor';

export type ApprovalServiceQueue =
  typeof QueueName.ApprovalRequests | typeof ApprovalServiceQueueName.Notifications;

export function approvalServiceQueues(
  { env }: ApprovalServiceConfig,
  logger: Logger,
): QueueModuleOptions<ApprovalServiceQueue> {
  return {
    service: 'approval-service',
    env,
    logger,
    produces: {
      [QueueName.ApprovalDecisions]: { attempts: env.DECISION_ATTEMPTS, backoffMs: env.DECISION_BACKOFF },
      [ApprovalServiceQueueName.Notifications]: {
        attempts: env.NOTIFY_ATTEMPTS,
        backoffMs: env.NOTIFY_BACKOFF,
      },
    },
    consumes: {
      [QueueName.ApprovalRequests]: { concurrency: env.REQUEST_CONCURRENCY },
      [ApprovalServiceQueueName.Notifications]: { concurrency: env.NOTIFY_CONCURRENCY },
    },
  };
}

export function approvalServiceJobs(
  requests: ApprovalRequestProcessor,
  notifications: NotificationProcessor,
): JobCatalog<ApprovalServiceQueue> {
  return { [JobName.RequestApproval]: requests, ...notifications.jobs };
}

// The approval service's queues: it publishes decisions and notifications (producer), and works on approval
// requests and notifications (one worker each, with the handler of every job they carry, from the feature that
// owns it: intake, notifications, and the approvals API's webhooks).
import { ApprovalServiceJobName, ApprovalServiceQueueName, JobName, QueueName } from '@countersign/contracts';
import type { JobCatalog, Logger, QueueModuleOptions } from '@countersign/platform';
import type { ApprovalServiceConfig } from './config/approval-service.config';
import type { ExternalWebhooks } from './external/external-webhooks';
import type { NotificationProcessor } from './notifications/notification.processor';
import type { ApprovalRequestProcessor } from './requests/intake/approval-request.processor';

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
  webhooks: ExternalWebhooks,
): JobCatalog<ApprovalServiceQueue> {
  return {
    [JobName.RequestApproval]: requests,
    ...notifications.jobs,
    // A webhook that failed for good is recorded like any notification.
    [ApprovalServiceJobName.NotifyWebhook]: {
      handle: (job) => webhooks.deliver(job),
      failedForGood: notifications.failedForGood,
    },
  };
}

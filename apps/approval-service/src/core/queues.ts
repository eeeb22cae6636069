// The queues this service publishes to, with BullMQ defaults set once from config.
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Queue, type DefaultJobOptions } from 'bullmq';
import { ApprovalServiceQueueName, QueueName } from '@countersign/contracts';
import { type Logger, throttledErrorLog } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { RedisConnections } from './redis-connections';
import { LOGGER } from './tokens';

@Injectable()
export class Queues implements OnApplicationShutdown {
  readonly decisions: Queue;
  readonly notifications: Queue;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    redis: RedisConnections,
    @Inject(LOGGER) logger: Logger,
  ) {
    // Producers have an auto-pipelined connection of their own (see RedisConnections.producers). While Redis
    // is down every reconnect attempt is an error event: logged, throttled (an unheard one is printed by
    // BullMQ with its stack, once per attempt).
    const reportError = throttledErrorLog(logger, 'queue producer error');
    const queue = (name: string, defaultJobOptions: DefaultJobOptions) =>
      new Queue(name, { connection: redis.producers, prefix: env.QUEUE_PREFIX, defaultJobOptions }).on(
        'error',
        (error) => reportError({ queue: name }, error),
      );
    // Retention (finished jobs kept an hour, failed ones kept) is the consuming workers' option, not stored
    // in every job.
    this.decisions = queue(QueueName.ApprovalDecisions, {
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
    });
    this.notifications = queue(ApprovalServiceQueueName.Notifications, {
      attempts: env.NOTIFY_ATTEMPTS,
      backoff: { type: 'exponential', delay: env.NOTIFY_BACKOFF },
    });
  }

  get all(): Queue[] {
    return [this.decisions, this.notifications];
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.all.map((q) => q.close()));
  }
}

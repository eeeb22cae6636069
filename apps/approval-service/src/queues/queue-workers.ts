// Starts one BullMQ Worker per processor once the app is up, and stops them (finishing active jobs) on close.
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Worker } from 'bullmq';
import { type Logger, throttledErrorLog } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { RedisConnections } from '../core/redis-connections';
import { LOGGER } from '../core/tokens';
import { ApprovalRequestProcessor } from './approval-request.processor';
import { NotificationProcessor } from './notification.processor';
import { describeJob, type QueueProcessor } from './queue-processor';

@Injectable()
export class QueueWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly workers: Worker[] = [];
  private readonly processors: QueueProcessor[];

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
    requests: ApprovalRequestProcessor,
    notifications: NotificationProcessor,
  ) {
    this.processors = [requests, notifications];
  }

  async onApplicationBootstrap(): Promise<void> {
    const reportError = throttledErrorLog(this.logger, 'worker error');
    for (const processor of this.processors) {
      const worker = new Worker(processor.queueName, (job) => processor.process(job), {
        connection: this.redis.bull,
        prefix: this.config.env.QUEUE_PREFIX,
        concurrency: processor.concurrency,
        // Finished jobs are kept an hour (a re-published job ID is still deduplicated); failed ones are
        // kept (BullMQ's default). Set here, not per job: options set per job are stored in each job.
        removeOnComplete: { age: 3_600, count: 10_000 },
      });
      worker.on('failed', (job, error) => {
        if (!job) return;
        const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
        const data = job.data as { callId?: string; runId?: string };
        this.logger[final ? 'error' : 'warn'](
          {
            queue: processor.queueName,
            job: describeJob(job),
            callId: data?.callId,
            runId: data?.runId,
            err: error.message,
            final,
          },
          'job failed',
        );
        processor
          .onFailed?.(job, error, final)
          .catch((e: unknown) => this.logger.error({ err: e }, 'failure handler failed'));
      });
      worker.on('error', (error) => reportError({ queue: processor.queueName }, error));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}

// The BullMQ workers of this process, built from validated config (concurrency, lock and stall
// timings), started after boot and closed first on shutdown, letting in-flight jobs finish.
import { type Job, Worker } from 'bullmq';
import { QueueName } from '@countersign/contracts';
import { type Logger, throttledErrorLog } from '@countersign/platform';
import type { AgentWorkerConfig } from '../config/worker-config';
import type { Connections } from './connections';
import type { QueueHandler } from './processors';

export class QueueWorkers {
  private readonly workers: Worker[] = [];

  constructor(
    private readonly config: AgentWorkerConfig,
    private readonly connections: Connections,
    private readonly logger: Logger,
  ) {}

  start(handlers: Partial<Record<QueueName, QueueHandler>>): void {
    const reportError = throttledErrorLog(this.logger, 'queue worker error');
    for (const [queue, handler] of Object.entries(handlers) as [QueueName, QueueHandler][]) {
      const worker = new Worker(queue, handler.process, {
        connection: this.connections.workers,
        prefix: this.config.QUEUE_PREFIX,
        concurrency: this.config.WORKER_CONCURRENCY,
        stalledInterval: this.config.STALLED_INTERVAL_MS,
        lockDuration: this.config.LOCK_DURATION_MS,
        // A job whose lock lapsed is redelivered up to this many times; one more and BullMQ fails it
        // (failedForGood then fails the run it owned, so no run stays `running`).
        maxStalledCount: this.config.MAX_STALLED_COUNT,
        removeOnComplete: { age: 3600, count: 10_000 },
        // removeOnFail left unset: failed jobs are kept (invalid messages stay inspectable).
      });
      worker.on('failed', (job, error) => {
        this.logger.warn({ queue, job: job?.id, name: job?.name, err: error.message }, 'job failed');
        if (job) void this.afterFailure(queue, handler, job, error);
      });
      worker.on('error', (error) => reportError({ queue }, error));
      this.workers.push(worker);
    }
  }

  private async afterFailure(queue: QueueName, handler: QueueHandler, job: Job, error: Error): Promise<void> {
    try {
      if (await job.isFailed()) await handler.failedForGood(job, error);
    } catch (err) {
      this.logger.error({ queue, job: job.id, err: String(err) }, 'could not settle the run of a failed job');
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  async isRunning(): Promise<boolean> {
    return this.workers.every((w) => w.isRunning());
  }
}

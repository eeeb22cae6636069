// The BullMQ workers of this process, built from validated config (concurrency, lock and stall
// timings), started after boot and closed first on shutdown, letting in-flight jobs finish.
import { Worker } from 'bullmq';
import { QueueName } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AgentWorkerConfig } from '../config/worker-config';
import type { Connections } from './connections';
import type { JobProcessor } from './processors';

export class QueueWorkers {
  private readonly workers: Worker[] = [];

  constructor(
    private readonly config: AgentWorkerConfig,
    private readonly connections: Connections,
    private readonly logger: Logger,
  ) {}

  start(processors: Partial<Record<QueueName, JobProcessor>>): void {
    for (const [queue, processor] of Object.entries(processors) as [QueueName, JobProcessor][]) {
      const worker = new Worker(queue, processor, {
        connection: this.connections.workers,
        prefix: this.config.QUEUE_PREFIX,
        concurrency: this.config.WORKER_CONCURRENCY,
        stalledInterval: this.config.STALLED_INTERVAL_MS,
        lockDuration: this.config.LOCK_DURATION_MS,
        maxStalledCount: 1,
        removeOnComplete: { age: 3600, count: 10_000 },
        // removeOnFail left unset: failed jobs are kept (invalid messages stay inspectable).
      });
      worker.on('failed', (job, error) => {
        this.logger.warn({ queue, job: job?.id, name: job?.name, err: error.message }, 'job failed');
      });
      worker.on('error', (error) => this.logger.error({ queue, err: error.message }, 'queue worker error'));
      this.workers.push(worker);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  async isRunning(): Promise<boolean> {
    return this.workers.every((w) => w.isRunning());
  }
}

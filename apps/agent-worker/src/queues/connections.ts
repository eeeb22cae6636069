// Every Redis connection and BullMQ queue of one app instance, closed together (after the workers)
// so a graceful shutdown never cuts a connection under an in-flight job.
import { Queue, type DefaultJobOptions } from 'bullmq';
import { QueueName } from '@countersign/contracts';
import { createRedis, type Logger, type RedisClient, throttledErrorLog } from '@countersign/platform';
import type { AgentWorkerConfig } from '../config/worker-config';

export class Connections {
  /** Plain commands: run state, audit, infra, publishing events. */
  readonly commands: RedisClient;
  /** Pub/sub subscriber for run events (a subscribed connection can run nothing else). */
  readonly subscriber: RedisClient;
  /**
   * BullMQ's producers (`Queue.add`), auto-pipelined. Not `commands`: BullMQ defines its 64 scripts on the
   * connection it uses, and ioredis copies every defined script into each auto-pipeline batch it builds.
   */
  readonly producers: RedisClient;
  /** Shared by the BullMQ workers (BullMQ duplicates it for its blocking reads). */
  readonly workers: RedisClient;
  readonly queues: Record<QueueName, Queue>;
  readonly defaultJobOptions: DefaultJobOptions;

  constructor(
    private readonly config: AgentWorkerConfig,
    logger: Logger,
  ) {
    const target = { url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES };
    this.commands = createRedis(target, { name: 'agent-worker', logger });
    this.subscriber = createRedis(target, { name: 'agent-worker-events', logger });
    this.producers = createRedis(target, { name: 'agent-worker-producers', logger });
    this.workers = createRedis(target, { blocking: true, name: 'agent-worker-queues', logger });
    // Only what the job itself must carry: BullMQ stores a job's options in its hash, so every option
    // here costs bytes in each queued approval request. How long finished jobs are kept is the
    // consuming Worker's `removeOnComplete` (an hour, so a retried publish with the same job ID is still
    // deduplicated); failed jobs are kept (BullMQ's default).
    this.defaultJobOptions = {
      attempts: config.JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: config.JOB_BACKOFF_MS },
    };
    // While Redis is down every reconnect attempt is an error event: logged, throttled (an unheard one is
    // printed by BullMQ with its stack, once per attempt).
    const reportError = throttledErrorLog(logger, 'queue producer error');
    const queue = (name: QueueName) =>
      new Queue(name, {
        connection: this.producers,
        prefix: config.QUEUE_PREFIX,
        defaultJobOptions: this.defaultJobOptions,
      }).on('error', (error) => reportError({ queue: name }, error));
    this.queues = {
      [QueueName.AgentRuns]: queue(QueueName.AgentRuns),
      [QueueName.ApprovalRequests]: queue(QueueName.ApprovalRequests),
      [QueueName.ApprovalDecisions]: queue(QueueName.ApprovalDecisions),
    };
  }

  get queuePrefix(): string {
    return this.config.QUEUE_PREFIX;
  }

  async close(): Promise<void> {
    await Promise.allSettled(Object.values(this.queues).map((q) => q.close()));
    await Promise.allSettled(
      [this.commands, this.subscriber, this.producers, this.workers].map((c) => c.quit()),
    );
  }
}

// What an app tells the queue module, built from its validated config at bootstrap (never read at import time,
// so several app instances with different settings can run in one process).
import type { QueueName } from '@countersign/contracts';
import type { BaseEnv } from '../base-config';
import type { Logger } from '../logger';

/** Retries of the jobs an app adds to a queue (stored in each job by BullMQ). */
export interface JobRetry {
  attempts: number;
  /** First delay of the exponential backoff between attempts. */
  backoffMs: number;
}

/** One BullMQ worker. Timings left out keep BullMQ's defaults. */
export interface WorkerSettings {
  /** Jobs handled at once. */
  concurrency: number;
  /** How long a job's lock lives without renewal; a dead worker's job is redelivered after this. */
  lockDurationMs?: number;
  /** How often the worker looks for jobs whose lock lapsed. */
  stalledIntervalMs?: number;
  /** Redeliveries of a job whose lock lapsed before BullMQ fails it for good. */
  maxStalledCount?: number;
}

export interface QueueModuleOptions<Consumed extends QueueName = QueueName> {
  /** Names the connections (CLIENT LIST). */
  service: string;
  /**
   * Redis (or Redis Cluster), the BullMQ prefix (a hash tag, for Redis Cluster) and the queue shards (see
   * queue-shards.ts; one when left out).
   */
  env: Pick<BaseEnv, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX'> &
    Partial<Pick<BaseEnv, 'QUEUE_SHARDS'>>;
  logger: Logger;
  /** The queues the app adds jobs to (each one injectable with `@InjectQueue(name)`), with their retries. */
  produces: Partial<Record<QueueName, JobRetry>>;
  /** The queues the app works on: one worker each, running the handlers of the app's job catalog. */
  consumes: Record<Consumed, WorkerSettings>;
}

export const QUEUE_MODULE_OPTIONS = Symbol('QueueModuleOptions');

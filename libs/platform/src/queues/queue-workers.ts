// The BullMQ workers of one app instance: one per consumed queue, built in this one factory from the app's
// validated settings and its job catalog, started once the app has booted and closed before anything else of
// the queue layer, letting in-flight jobs finish.
//
// Not @nestjs/bullmq's @Processor: its worker options are class metadata. In
// node_modules/@nestjs/bullmq/dist/bull.explorer.js, `BullExplorer.registerWorkers()` takes them from
// `getWorkerOptionsMetadata(instance.constructor)`, i.e. what `@Processor(queue, workerOptions)` fixed when the
// class was declared, and `handleProcessor()` spreads them into `new Worker(...)`. Concurrency and lock/stall
// timings come from each instance's runtime config (tests run several instances with different ones in one
// process), which a decorator argument cannot carry; and those workers start at module init, before the app has
// booted, and close in the explorer's onApplicationShutdown, after the HTTP server and the connections. Queues do
// come from @nestjs/bullmq (see QueueModule); the workers are built here, as in Immich's job repository.
import { type Job, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { type JobName, type QueueName, isJobName, JobContracts, jobsOn } from '@countersign/contracts';
import { throttledErrorLog } from '../logger';
import { isFailedForGood } from './failed-for-good';
import { type JobHandler, MissingJobHandlerError, parseJob } from './job-catalog';
import type { QueueModuleOptions, WorkerSettings } from './queue-options';
import { queueShardPrefixes } from './queue-shards';
import { REMOVE_ON_COMPLETE } from './retention';
import type { RedisConnections } from './redis-connections';

type AnyHandler = JobHandler<JobName>;

export class QueueWorkers {
  private readonly workers: Worker[] = [];
  /** failedForGood handlers still running; close() waits for them before the connections go. */
  private readonly settling = new Set<Promise<void>>();
  private catalog?: Partial<Record<JobName, AnyHandler>>;

  constructor(
    private readonly options: QueueModuleOptions,
    private readonly connections: RedisConnections,
  ) {}

  private get consumed(): QueueName[] {
    return Object.keys(this.options.consumes) as QueueName[];
  }

  /** Takes the app's catalog; throws, naming each job to add, when a job of a consumed queue has no handler. */
  useCatalog(catalog: unknown): void {
    const handlers = (catalog ?? {}) as Partial<Record<JobName, Partial<AnyHandler>>>;
    const missing = this.consumed.flatMap((queue) =>
      jobsOn(queue)
        .filter((name) => typeof handlers[name]?.handle !== 'function')
        .map((name) => ({ queue, name })),
    );
    if (missing.length > 0) throw new MissingJobHandlerError(this.options.service, missing);
    this.catalog = handlers as Partial<Record<JobName, AnyHandler>>;
  }

  start(): void {
    if (!this.catalog) throw new Error('QueueWorkers.start() before useCatalog()');
    if (this.workers.length > 0) return;
    const reportError = throttledErrorLog(this.options.logger, 'queue worker error');
    const shards = this.options.env.QUEUE_SHARDS ?? 1;
    // Every shard of every consumed queue: any process takes any run's jobs, whichever shard carries them.
    for (const prefix of queueShardPrefixes(this.options.env.QUEUE_PREFIX, shards)) {
      for (const queue of this.consumed) {
        const worker = new Worker(queue, (job, token) => this.process(queue, job, token), {
          ...this.workerOptions(this.options.consumes[queue], shards),
          prefix,
          removeOnComplete: { ...REMOVE_ON_COMPLETE },
        });
        worker.on('failed', (job, error) => {
          if (job) this.track(this.afterFailure(queue, job, error));
        });
        worker.on('error', (error) => reportError({ queue, prefix }, error));
        this.workers.push(worker);
      }
    }
  }

  /** True once started while every worker runs (for /health). */
  isRunning(): boolean {
    return this.workers.length > 0 && this.workers.every((w) => w.isRunning());
  }

  /** Finishes in-flight jobs (and the failure handlers they triggered); takes no new job. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    while (this.settling.size > 0) await Promise.allSettled([...this.settling]);
  }

  /**
   * The shards of a queue share its concurrency (rounded up), so a process holds about as many jobs at once as with
   * one shard; run IDs hash evenly, so each shard gets its share of the jobs.
   */
  private workerOptions(settings: WorkerSettings, shards: number): WorkerOptions {
    const timings = {
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
    };
    return {
      connection: this.connections.workers,
      concurrency: Math.ceil(settings.concurrency / shards),
      // BullMQ merges these over its defaults with Object.assign: an undefined would replace a default.
      ...Object.fromEntries(Object.entries(timings).filter(([, value]) => value !== undefined)),
    };
  }

  /** Validates the payload against the contract, then runs the job's handler. */
  private async process(queue: QueueName, job: Job, token: string | undefined): Promise<unknown> {
    const handler = this.handlerOf(queue, job.name);
    if (!handler) {
      throw new UnrecoverableError(
        isJobName(job.name)
          ? `job "${job.name}" does not belong on queue ${queue}`
          : `no handler for job "${job.name}" on queue ${queue}`,
      );
    }
    return handler.handle(parseJob(job.name as JobName, job), job, token);
  }

  private handlerOf(queue: QueueName, name: string): AnyHandler | undefined {
    if (!isJobName(name) || JobContracts[name].queue !== queue) return undefined;
    return this.catalog?.[name];
  }

  private async afterFailure(queue: QueueName, job: Job, error: Error): Promise<void> {
    const final = isFailedForGood(job, error);
    const data = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as Record<
      string,
      unknown
    >;
    this.options.logger[final ? 'error' : 'warn'](
      {
        queue,
        job: job.id,
        name: job.name,
        callId: typeof data.callId === 'string' ? data.callId : undefined,
        runId: typeof data.runId === 'string' ? data.runId : undefined,
        attempt: job.attemptsMade,
        err: error.message,
        final,
      },
      'job failed',
    );
    if (!final) return;
    try {
      await this.handlerOf(queue, job.name)?.failedForGood?.(job, error);
    } catch (err) {
      this.options.logger.error(
        { queue, job: job.id, name: job.name, err: String(err) },
        'could not settle a job that failed for good',
      );
    }
  }

  private track(settling: Promise<void>): void {
    this.settling.add(settling);
    void settling.finally(() => this.settling.delete(settling));
  }
}

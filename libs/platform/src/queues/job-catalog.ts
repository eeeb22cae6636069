// An app's job catalog: the handler of every job on the queues it consumes. Keyed by job name, so the compiler
// names a job that has no handler; each payload is validated against the contract (libs/contracts
// job-contracts.ts) before the handler sees it.
import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import { type Job, UnrecoverableError } from 'bullmq';
import {
  type JobName,
  type QueueName,
  ContractValidationError,
  describeZodError,
  JobContracts,
  type JobPayload,
  payloadOf,
  type JobsOn,
} from '@countersign/contracts';

export interface JobHandler<N extends JobName> {
  /** Does the work. Throw to retry (with the queue's backoff); throw an UnrecoverableError to fail for good. */
  handle(payload: JobPayload<N>, job: Job, token: string | undefined): Promise<unknown>;
  /**
   * Settles what a job that failed for good (isFailedForGood) leaves behind; also called for jobs BullMQ fails
   * without the handler (one that stalled too often) and for invalid payloads.
   */
  failedForGood?(job: Job, error: Error): Promise<void>;
}

/** One handler for every job the queues `Q` carry. */
export type JobCatalog<Q extends QueueName> = { readonly [N in JobsOn<Q>]: JobHandler<N> };

/** Where the queue module finds the app's catalog once every module is initialised. */
export const JOB_CATALOG = Symbol('JobCatalog');

/** The provider of an app's catalog, built from the app's own services. */
export function provideJobCatalog<Q extends QueueName, D extends unknown[]>(
  build: (...deps: D) => JobCatalog<Q>,
  inject: { [K in keyof D]: InjectionToken },
): FactoryProvider<JobCatalog<Q>> {
  return { provide: JOB_CATALOG, useFactory: build, inject };
}

/** The payload, parsed; an invalid one fails for good (kept in the failed set) with every bad field named. */
export function parseJob<N extends JobName>(name: N, job: Job): JobPayload<N> {
  const parsed = JobContracts[name].schema.safeParse(payloadOf(name, job));
  if (parsed.success) return parsed.data as JobPayload<N>;
  const invalid = new ContractValidationError(`${name} message`, describeZodError(parsed.error));
  throw new UnrecoverableError(invalid.message);
}

/** Start-up refused: a job that a consumed queue carries has no handler in the app's catalog. */
export class MissingJobHandlerError extends Error {
  constructor(
    readonly service: string,
    readonly missing: { queue: QueueName; name: JobName }[],
  ) {
    const jobs = missing.map((m) => `"${m.name}" (queue ${m.queue})`).join(', ');
    super(
      `${service}: no handler for job ${jobs}; add one to the job catalog that the app provides with ` +
        'provideJobCatalog()',
    );
    this.name = this.constructor.name;
  }
}

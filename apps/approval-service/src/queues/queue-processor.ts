import type { Job } from 'bullmq';

/** A thin job handler: validate the payload, hand it to a service, return. QueueWorkers runs one Worker per processor. */
export interface QueueProcessor {
  readonly queueName: string;
  readonly concurrency: number;
  process(job: Job): Promise<void>;
  /** Called after a failed attempt; `final` when no retry is left. */
  onFailed?(job: Job, error: Error, final: boolean): Promise<void>;
}

/** Validates `job.data`; a bad payload becomes an error naming the fields (the caller makes it unrecoverable). */
export function describeJob(job: Job): string {
  return `${job.name} ${job.id ?? ''}`.trim();
}

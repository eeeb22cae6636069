// When a failed job is failed for good: the one rule both apps use to settle what such a job leaves behind.
import { type Job, UnrecoverableError } from 'bullmq';

/**
 * BullMQ's own rule (`Job.shouldRetryJob` in bullmq/dist/cjs/classes/job.js): no retry after an
 * UnrecoverableError (ours, or the one BullMQ fails a job with that stalled more than `maxStalledCount`), nor
 * once every attempt is used. For a worker's `failed` event, where `attemptsMade` already counts the attempt
 * that failed. Decided from the event itself, not by asking Redis for the job's state: the answer does not
 * depend on Redis answering, and a retry that already failed again cannot make an earlier attempt look final.
 */
export function isFailedForGood(job: Job, error: Error): boolean {
  const unrecoverable = error instanceof UnrecoverableError || error.name === 'UnrecoverableError';
  return unrecoverable || job.attemptsMade >= (job.opts.attempts ?? 1);
}

/** Inside a processor, before it throws: whether a (retryable) error now would fail the job for good. */
export function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

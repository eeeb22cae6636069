// What every job on a run does around its work (a run.start job, a decision): it works under a lease on the run, and
// its failures end the right way. A lost run (another worker took it over) ends the job quietly; a run waiting on a
// call that still executes on a live worker comes back later (the job is delayed, not failed); a forged decision
// fails for good; any other error is thrown so BullMQ retries from the state in Redis, and on the last attempt the run
// fails with the reason instead of staying stuck. A job that failed for good fails the run it still owns.
import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { isLastAttempt, type Logger } from '@countersign/platform';
import { WORKER_LOGGER } from '../core/worker-logger';
import { CallsInFlightError } from './frontier-settlement';
import { RunEndings } from './run-endings';
import type { Lease } from './run-state';
import { ExecutionLostError, OwnershipLostError } from './run-store.errors';

/** A signed message whose signature does not verify: nothing ran, and it must not be retried. */
export class ForgedDecisionError extends Error {
  constructor(callId: string) {
    super(`decision for call "${callId}" has a missing or invalid signature; nothing ran`);
    this.name = this.constructor.name;
  }
}

/** Set on a job that waits (delayed) for calls executing on another worker; it audited its decision before. */
interface WaitProgress {
  waitingForCalls: string[];
}

/** The job waited for calls executing on another worker before (it comes back only to resume). */
export function hasWaitedForCalls(job: Job): boolean {
  const progress = job.progress as Partial<WaitProgress> | number | undefined;
  return typeof progress === 'object' && Array.isArray(progress.waitingForCalls);
}

@Injectable()
export class RunJobGuard {
  constructor(
    @Inject(RunEndings) private readonly endings: Pick<RunEndings, 'failRun' | 'failOrphanedRun'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** A run still owned by a job that failed for good must not stay `running`: it fails with the reason. */
  async failedForGood(job: Job, error: Error): Promise<void> {
    const runId = (job.data as { runId?: unknown } | undefined)?.runId;
    if (!job.id || typeof runId !== 'string') return;
    await this.endings.failOrphanedRun(runId, job.id, error.message);
  }

  async guarded(
    job: Job,
    token: string | undefined,
    runId: string,
    work: (lease: Lease) => Promise<unknown>,
  ): Promise<unknown> {
    const lease = leaseOf(job, token);
    try {
      return await work(lease);
    } catch (error) {
      if (error instanceof OwnershipLostError || error instanceof ExecutionLostError) {
        this.logger.warn(
          { runId, job: job.id, err: error.message },
          'another worker owns the run now; this job stops',
        );
        return 'ownership_lost';
      }
      if (error instanceof CallsInFlightError) return this.waitForCalls(job, token, runId, error);
      if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
      const text = error instanceof Error ? error.message : String(error);
      this.logger.error({ runId, job: job.id, attempt: job.attemptsMade + 1, err: text }, 'job failed');
      if (isLastAttempt(job)) await this.endings.failRun(runId, lease, text).catch(() => undefined);
      throw error;
    }
  }

  private async waitForCalls(
    job: Job,
    token: string | undefined,
    runId: string,
    error: CallsInFlightError,
  ): Promise<never> {
    this.logger.info(
      { runId, job: job.id, calls: error.callIds },
      'waiting for calls executing on a live worker',
    );
    await job.updateProgress({ waitingForCalls: error.callIds } satisfies WaitProgress);
    await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
    throw new DelayedError();
  }
}

function leaseOf(job: Job, token: string | undefined): Lease {
  if (!job.id || !token) throw new UnrecoverableError('job has no ID or lock token');
  // Orders this processing among the job's others (see Lease); BullMQ counted it up as the job became active.
  const started = job.attemptsStarted;
  if (!Number.isSafeInteger(started) || started < 1)
    throw new UnrecoverableError(`job has no start count (attemptsStarted ${String(started)})`);
  return { jobId: job.id, token, started };
}

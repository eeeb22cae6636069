// Thin job handlers: each gets its payload validated (an invalid one fails for good, naming the field, and stays
// in the failed set), hands it to a service and returns.
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import {
  JobName,
  type SignedDecision,
  type SignedManualStepDone,
  type StartRunJob,
} from '@countersign/contracts';
import { isLastAttempt, type JobHandler, type Logger } from '@countersign/platform';
import { Decisions, ForgedDecisionError } from '../runs/decisions';
import { CallsInFlightError, type RunLoop } from '../runs/run-loop';
import type { Lease } from '../runs/run-state';
import { ExecutionLostError, OwnershipLostError } from '../runs/run-store.errors';

/** A run still owned by a job that failed for good must not stay `running`: it fails with the reason. */
async function failRunOwnedBy(runLoop: RunLoop, job: Job, error: Error): Promise<void> {
  const runId = (job.data as { runId?: unknown } | undefined)?.runId;
  if (!job.id || typeof runId !== 'string') return;
  await runLoop.failOrphanedRun(runId, job.id, error.message);
}

function leaseOf(job: Job, token: string | undefined): Lease {
  if (!job.id || !token) throw new UnrecoverableError('job has no ID or lock token');
  // Orders this processing among the job's others (see Lease); BullMQ counted it up as the job became active.
  const started = job.attemptsStarted;
  if (!Number.isSafeInteger(started) || started < 1)
    throw new UnrecoverableError(`job has no start count (attemptsStarted ${String(started)})`);
  return { jobId: job.id, token, started };
}

/**
 * Both jobs work on one run. A lost run (another worker took it over) ends the job quietly; a run waiting on a
 * call that still executes on a live worker comes back later (the job is delayed, not failed); a forged decision
 * fails for good; any other error is thrown so BullMQ retries from the state in Redis, and on the last attempt the
 * run fails with the reason instead of staying stuck. A job that failed for good fails the run it still owns.
 */
abstract class RunJobProcessor {
  constructor(
    protected readonly runLoop: RunLoop,
    protected readonly logger: Logger,
  ) {}

  failedForGood(job: Job, error: Error): Promise<void> {
    return failRunOwnedBy(this.runLoop, job, error);
  }

  protected async guarded(
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
      if (error instanceof CallsInFlightError) {
        this.logger.info(
          { runId, job: job.id, calls: error.callIds },
          'waiting for calls executing on a live worker',
        );
        await job.updateProgress({ waitingForCalls: error.callIds } satisfies WaitProgress);
        await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
        throw new DelayedError();
      }
      if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
      const text = error instanceof Error ? error.message : String(error);
      this.logger.error({ runId, job: job.id, attempt: job.attemptsMade + 1, err: text }, 'job failed');
      if (isLastAttempt(job)) await this.runLoop.failRun(runId, lease, text).catch(() => undefined);
      throw error;
    }
  }
}

export class RunsProcessor extends RunJobProcessor implements JobHandler<typeof JobName.StartRun> {
  handle(message: StartRunJob, job: Job, token: string | undefined): Promise<unknown> {
    return this.guarded(job, token, message.runId, (lease) => this.runLoop.start(message, lease));
  }
}

export class DecisionsProcessor extends RunJobProcessor implements JobHandler<typeof JobName.Decision> {
  constructor(
    private readonly decisions: Decisions,
    runLoop: RunLoop,
    logger: Logger,
  ) {
    super(runLoop, logger);
  }

  handle(message: SignedDecision, job: Job, token: string | undefined): Promise<unknown> {
    return this.guarded(job, token, message.runId, (lease) =>
      this.decisions.apply(job.data as Record<string, unknown>, message, lease, job.timestamp, {
        receiptAudited: hasWaitedForCalls(job),
      }),
    );
  }
}

/**
 * A person did a notice's manual step: the run keeps a note for its model. It works on no parked call and owns no
 * lease, so nothing is failed with it; a forged message fails for good (kept in the failed set).
 */
export class ManualStepsProcessor implements JobHandler<typeof JobName.ManualStepDone> {
  constructor(private readonly decisions: Decisions) {}

  async handle(message: SignedManualStepDone, job: Job): Promise<unknown> {
    try {
      return await this.decisions.noteManualStep(job.data as Record<string, unknown>, message);
    } catch (error) {
      if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
      throw error;
    }
  }
}

/** Set on a job that waits (delayed) for calls executing on another worker; it audited its decision before. */
interface WaitProgress {
  waitingForCalls: string[];
}

function hasWaitedForCalls(job: Job): boolean {
  const progress = job.progress as Partial<WaitProgress> | number | undefined;
  return typeof progress === 'object' && Array.isArray(progress.waitingForCalls);
}

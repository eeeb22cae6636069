// Thin queue processors: validate the message, hand it to a service, return. Invalid messages fail
// for good (UnrecoverableError naming the field) and stay in the failed set; nothing else is lost.
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { z } from 'zod';
import {
  describeZodError,
  JobName,
  SignedDecisionSchema,
  SignedManualStepDoneSchema,
  StartRunJobSchema,
} from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { Decisions, ForgedDecisionError } from '../runs/decisions';
import { CallsInFlightError, type RunLoop } from '../runs/run-loop';
import type { Lease } from '../runs/run-state';
import { ExecutionLostError, OwnershipLostError } from '../runs/run-store.errors';

/** Processors by queue and job name; a job name without a processor fails with a message saying so. */
export type JobProcessor = (job: Job, token: string | undefined) => Promise<unknown>;

/** What a queue worker runs: the processor, and what to do when one of its jobs failed for good. */
export interface QueueHandler {
  process: JobProcessor;
  /** Also called for failures BullMQ decides without the processor (a job that stalled too often). */
  failedForGood(job: Job, error: Error): Promise<void>;
}

/** A run still owned by a job that failed for good must not stay `running`: it fails with the reason. */
async function failRunOwnedBy(runLoop: RunLoop, job: Job, error: Error): Promise<void> {
  const runId = (job.data as { runId?: unknown } | undefined)?.runId;
  if (!job.id || typeof runId !== 'string') return;
  await runLoop.failOrphanedRun(runId, job.id, error.message);
}

export function parseJob<S extends z.ZodType>(schema: S, job: Job): z.output<S> {
  const parsed = schema.safeParse(job.data);
  if (parsed.success) return parsed.data;
  const fields = describeZodError(parsed.error).map((i) => `${i.path}: ${i.message}`);
  throw new UnrecoverableError(`invalid ${job.name} message: ${fields.join('; ')}`);
}

function leaseOf(job: Job, token: string | undefined): Lease {
  if (!job.id || !token) throw new UnrecoverableError('job has no ID or lock token');
  return { jobId: job.id, token };
}

function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

export class RunsProcessor implements QueueHandler {
  constructor(
    private readonly runLoop: RunLoop,
    private readonly logger: Logger,
  ) {}

  readonly failedForGood = (job: Job, error: Error) => failRunOwnedBy(this.runLoop, job, error);

  readonly process: JobProcessor = async (job, token) => {
    const name = job.name as JobName;
    switch (name) {
      case JobName.StartRun: {
        const message = parseJob(StartRunJobSchema, job);
        const lease = leaseOf(job, token);
        return guarded(
          this.logger,
          job,
          token,
          message.runId,
          () => this.runLoop.start(message, lease),
          (error) => this.runLoop.failRun(message.runId, lease, error),
        );
      }
      case JobName.RequestApproval:
      case JobName.Decision:
      case JobName.ManualStepDone:
        throw new UnrecoverableError(`job "${name}" does not belong on the agent-runs queue`);
      default:
        return unknownJob(name);
    }
  };
}

export class DecisionsProcessor implements QueueHandler {
  constructor(
    private readonly decisions: Decisions,
    private readonly runLoop: RunLoop,
    private readonly logger: Logger,
  ) {}

  readonly failedForGood = (job: Job, error: Error) => failRunOwnedBy(this.runLoop, job, error);

  readonly process: JobProcessor = async (job, token) => {
    const name = job.name as JobName;
    switch (name) {
      case JobName.Decision: {
        const message = parseJob(SignedDecisionSchema, job);
        const lease = leaseOf(job, token);
        return guarded(
          this.logger,
          job,
          token,
          message.runId,
          () =>
            this.decisions.apply(job.data as Record<string, unknown>, message, lease, job.timestamp, {
              receiptAudited: hasWaitedForCalls(job),
            }),
          (error) => this.runLoop.failRun(message.runId, lease, error),
        );
      }
      case JobName.ManualStepDone: {
        const message = parseJob(SignedManualStepDoneSchema, job);
        try {
          return await this.decisions.noteManualStep(job.data as Record<string, unknown>, message);
        } catch (error) {
          if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
          throw error;
        }
      }
      case JobName.StartRun:
      case JobName.RequestApproval:
        throw new UnrecoverableError(`job "${name}" does not belong on the approval-decisions queue`);
      default:
        return unknownJob(name);
    }
  };
}

/**
 * Runs the work. A lost run (another worker took it over) ends quietly; a run waiting on a call that still
 * executes on a live worker comes back later (the job is delayed, not failed); a forged decision fails for
 * good; any other error is thrown so BullMQ retries from the state in Redis, and on the last attempt the run
 * fails with the reason instead of staying stuck.
 */
async function guarded(
  logger: Logger,
  job: Job,
  token: string | undefined,
  runId: string,
  work: () => Promise<unknown>,
  failRun: (error: string) => Promise<void>,
): Promise<unknown> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OwnershipLostError || error instanceof ExecutionLostError) {
      logger.warn(
        { runId, job: job.id, err: error.message },
        'another worker owns the run now; this job stops',
      );
      return 'ownership_lost';
    }
    if (error instanceof CallsInFlightError) {
      logger.info(
        { runId, job: job.id, calls: error.callIds },
        'waiting for calls executing on a live worker',
      );
      await job.updateProgress({ waitingForCalls: error.callIds } satisfies WaitProgress);
      await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
      throw new DelayedError();
    }
    if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
    const text = error instanceof Error ? error.message : String(error);
    logger.error({ runId, job: job.id, attempt: job.attemptsMade + 1, err: text }, 'job failed');
    if (isLastAttempt(job)) await failRun(text).catch(() => undefined);
    throw error;
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

function unknownJob(name: never): never {
  throw new UnrecoverableError(`no processor for job "${String(name)}"`);
}

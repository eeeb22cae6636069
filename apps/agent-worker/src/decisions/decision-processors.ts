// The handlers of what the approval service sends back on the decisions queue: a decision (applied under a lease on
// its run, see RunJobGuard) and a manual step done (a note for the run's model). Payloads arrive validated.
import { Inject, Injectable } from '@nestjs/common';
import { type Job, UnrecoverableError } from 'bullmq';
import type { JobName, SignedDecision, SignedManualStepDone } from '@countersign/contracts';
import type { JobHandler } from '@countersign/platform';
import { ForgedDecisionError, hasWaitedForCalls, RunJobGuard } from '../runs/run-job-guard';
import { DecisionApplier } from './decision-applier';
import { ManualStepNotes } from './manual-step-notes';

@Injectable()
export class DecisionsProcessor implements JobHandler<typeof JobName.Decision> {
  constructor(
    @Inject(RunJobGuard) private readonly guard: RunJobGuard,
    @Inject(DecisionApplier) private readonly decisions: DecisionApplier,
  ) {}

  handle(message: SignedDecision, job: Job, token: string | undefined): Promise<unknown> {
    return this.guard.guarded(job, token, message.runId, (lease) =>
      this.decisions.apply(job.data as Record<string, unknown>, message, lease, job.timestamp, {
        receiptAudited: hasWaitedForCalls(job),
      }),
    );
  }

  failedForGood(job: Job, error: Error): Promise<void> {
    return this.guard.failedForGood(job, error);
  }
}

/**
 * A person did a notice's manual step: the run keeps a note for its model. It works on no parked call and owns no
 * lease, so nothing is failed with it; a forged message fails for good (kept in the failed set).
 */
@Injectable()
export class ManualStepsProcessor implements JobHandler<typeof JobName.ManualStepDone> {
  constructor(@Inject(ManualStepNotes) private readonly notes: ManualStepNotes) {}

  async handle(message: SignedManualStepDone, job: Job): Promise<unknown> {
    try {
      return await this.notes.note(job.data as Record<string, unknown>, message);
    } catch (error) {
      if (error instanceof ForgedDecisionError) throw new UnrecoverableError(error.message);
      throw error;
    }
  }
}

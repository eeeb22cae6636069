// The run.start job's handler: its payload was validated against the contract; the run loop does the work.
import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { JobName, StartRunJob } from '@countersign/contracts';
import type { JobHandler } from '@countersign/platform';
import { RunJobGuard } from './run-job-guard';
import { RunLoop } from './run-loop';

@Injectable()
export class RunsProcessor implements JobHandler<typeof JobName.StartRun> {
  constructor(
    @Inject(RunJobGuard) private readonly guard: RunJobGuard,
    @Inject(RunLoop) private readonly runLoop: RunLoop,
  ) {}

  handle(message: StartRunJob, job: Job, token: string | undefined): Promise<unknown> {
    return this.guard.guarded(job, token, message.runId, (lease) => this.runLoop.start(message, lease));
  }

  failedForGood(job: Job, error: Error): Promise<void> {
    return this.guard.failedForGood(job, error);
  }
}

// How a run ends: completed or failed, with its last events stored by the script that ends it; also for a job that
// failed for good, so no run stays `running` behind it.
import { Inject, Injectable } from '@nestjs/common';
import { type ChatMessage, RunEventName, type RunEvent } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import type { Lease, RunRecord } from './run-state';
import { RunStore } from './run-store';

export interface RunEnd {
  status: 'completed' | 'failed';
  messages?: ChatMessage[];
  result?: string;
  error?: string;
}

@Injectable()
export class RunEndings {
  constructor(
    @Inject(RunStore) private readonly store: Pick<RunStore, 'finishRun' | 'load'>,
    @Inject(WorkerMetrics) private readonly metrics: Pick<WorkerMetrics, 'runsFinished'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** `before`: events of the run's last turn that go into its history ahead of its end (runbook node transitions). */
  async finish(
    run: Pick<RunRecord, 'runId'>,
    lease: Lease | { jobId: string },
    end: RunEnd,
    before: RunEvent[] = [],
  ): Promise<void> {
    const { runId } = run;
    // Stored and published by the script that ends the run: a run that reads as finished has its `done` event.
    const last: RunEvent[] = [
      ...before,
      ...(end.result !== undefined ? [{ type: RunEventName.Text, runId, text: end.result } as const] : []),
      { type: RunEventName.Status, runId, status: end.status },
      { type: RunEventName.Done, runId, status: end.status, result: end.result },
    ];
    const finished = await this.store.finishRun(runId, lease, end, last);
    if (!finished) return;
    this.metrics.runsFinished.inc({ status: end.status });
    this.logger.info({ runId, status: end.status, error: end.error }, 'run finished');
  }

  /** The run's agent has no model (not configured, or its provider has no key): the run fails saying why. */
  cannotRun(
    run: Pick<RunRecord, 'runId' | 'agent'>,
    lease: Lease,
    agent: { unavailable?: string } | undefined,
  ): Promise<void> {
    const why = agent?.unavailable ?? 'it is not configured';
    return this.finish(run, lease, { status: 'failed', error: `agent "${run.agent}" cannot run: ${why}` });
  }

  /** A job that failed for good: the run it owned fails too, with the reason (never silently stuck). */
  async failRun(runId: string, lease: Lease, error: string): Promise<void> {
    await this.finish({ runId }, lease, { status: 'failed', error });
  }

  /**
   * A job failed for good outside its processor (BullMQ failed it for stalling too often): a run some
   * processing of that job still owns would otherwise stay `running` forever, so it fails with the reason.
   */
  async failOrphanedRun(runId: string, jobId: string, error: string): Promise<void> {
    const run = await this.store.load(runId);
    // finish() ends it only if a processing of this job owns it, and logs when it did.
    if (run?.status === 'running')
      await this.finish(run, { jobId }, { status: 'failed', error: `job ${jobId} failed: ${error}` });
  }
}

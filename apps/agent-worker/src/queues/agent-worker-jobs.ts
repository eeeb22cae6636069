// The agent worker's queues: it starts runs and asks for approvals (producer), and works on runs and
// decisions (one worker each, with the handler of every job they carry).
import { JobName, QueueName } from '@countersign/contracts';
import type { JobCatalog, Logger, QueueModuleOptions } from '@countersign/platform';
import type { AgentWorkerEnv } from '../config/worker-config';
import type { DecisionsProcessor, ManualStepsProcessor } from '../decisions/decision-processors';
import type { RunsProcessor } from '../runs/runs.processor';

export type AgentWorkerQueue = typeof QueueName.AgentRuns | typeof QueueName.ApprovalDecisions;

export function agentWorkerQueues(
  config: AgentWorkerEnv,
  logger: Logger,
): QueueModuleOptions<AgentWorkerQueue> {
  const retry = { attempts: config.JOB_ATTEMPTS, backoffMs: config.JOB_BACKOFF_MS };
  const worker = {
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.LOCK_DURATION_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
    // A job whose lock lapsed is redelivered up to this many times; one more and BullMQ fails it (its handler's
    // failedForGood then fails the run it owned, so no run stays `running`).
    maxStalledCount: config.MAX_STALLED_COUNT,
  };
  return {
    service: 'agent-worker',
    env: config,
    logger,
    produces: { [QueueName.AgentRuns]: retry, [QueueName.ApprovalRequests]: retry },
    consumes: { [QueueName.AgentRuns]: worker, [QueueName.ApprovalDecisions]: worker },
  };
}

export function agentWorkerJobs(
  runs: RunsProcessor,
  decisions: DecisionsProcessor,
  manualSteps: ManualStepsProcessor,
): JobCatalog<AgentWorkerQueue> {
  return { [JobName.StartRun]: runs, [JobName.Decision]: decisions, [JobName.ManualStepDone]: manualSteps };
}

// The agent worker's queues: it starts runs and asks for approvals (producer), and works on runs and decisions (one
// queue worker each; their handlers are the job catalog, queues/agent-worker-jobs.ts).
import { QueueName } from '@countersign/contracts';
import type { Logger, QueueModuleOptions } from '@countersign/platform';
import type { AgentWorkerEnv } from '../config/worker-config';

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

// The agent worker's rate limits (RATE_LIMIT_* variables) as the guards read them: POST /runs is the one limited route.
import { type Logger, rateLimitPolicy, type RateLimitPolicy } from '@countersign/platform';
import type { AgentWorkerEnv } from './worker-config';

/** Route kinds of the worker (@RateLimited). */
export const WorkerRoute = { RunStart: 'run-start' } as const;

export function workerRateLimits(config: AgentWorkerEnv, logger: Logger): RateLimitPolicy {
  return rateLimitPolicy(config, logger, (named) => ({
    [WorkerRoute.RunStart]: {
      what: 'run starts',
      person: named('RATE_LIMIT_RUN_STARTS'),
      machine: named('RATE_LIMIT_RUN_STARTS_MACHINE'),
      address: named('RATE_LIMIT_RUN_STARTS_ADDRESS'),
    },
  }));
}

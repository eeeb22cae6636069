// The agent worker's rate limits (RATE_LIMIT_* variables) as the guards read them: POST /runs is the one limited route.
import type { Logger, NamedRateLimit, RateLimitPolicy } from '@countersign/platform';
import type { AgentWorkerEnv } from './worker-config';

/** Route kinds of the worker (@RateLimited). */
export const WorkerRoute = { RunStart: 'run-start' } as const;

type LimitSetting =
  'RATE_LIMIT_RUN_STARTS' | 'RATE_LIMIT_RUN_STARTS_MACHINE' | 'RATE_LIMIT_RUN_STARTS_ADDRESS';

export function workerRateLimits(config: AgentWorkerEnv, logger: Logger): RateLimitPolicy {
  const named = (setting: LimitSetting): NamedRateLimit | undefined =>
    config[setting] && { ...config[setting], setting };
  return {
    keyPrefix: config.KEY_PREFIX,
    logger,
    routes: {
      [WorkerRoute.RunStart]: {
        what: 'run starts',
        person: named('RATE_LIMIT_RUN_STARTS'),
        machine: named('RATE_LIMIT_RUN_STARTS_MACHINE'),
        address: named('RATE_LIMIT_RUN_STARTS_ADDRESS'),
      },
    },
  };
}

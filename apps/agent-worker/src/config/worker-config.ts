// The agent worker's configuration, read and validated once at start-up (bootstrap), then injected by its token
// (WORKER_CONFIG): the environment, the agents and principals files. Nothing else reads process.env or a config
// file (the runbooks directory is read by RunbookLibrary.load, at start-up too).
import { z } from 'zod';
import {
  BaseEnvSchema,
  loadEnv,
  loadJsonConfig,
  type PrincipalsConfig,
  PrincipalsConfigSchema,
  rateLimitSetting,
  TrustProxySchema,
} from '@countersign/platform';
import { type AgentsConfig, loadAgentsConfig } from './agents-config.schema';

const milliseconds = (fallback: number) => z.coerce.number().int().min(1).max(3_600_000).default(fallback);

export const AgentWorkerEnvSchema = BaseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Path of the agents config (JSON), relative to the working directory. */
  AGENTS_CONFIG: z.string().min(1).default('config/agents.json'),
  /**
   * Directory of runbook definitions (`*.yaml`, `*.yml`, `*.json`), e.g. `config/runbooks`; an invalid one refuses
   * start-up. Unset: no runbooks (their agents must exist in AGENTS_CONFIG, so they are not loaded by default).
   */
  RUNBOOKS_DIR: z.string().min(1).optional(),
  /** Jobs each queue worker of this process handles at once. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  /** How often BullMQ looks for jobs whose worker died; short in tests of killed workers. */
  STALLED_INTERVAL_MS: milliseconds(30_000),
  /** How long a job's lock lives without renewal; a dead worker's job is redelivered after this. */
  LOCK_DURATION_MS: milliseconds(30_000),
  /** Redeliveries of a job whose lock lapsed (its worker died or starved) before BullMQ fails it; its run then fails. */
  MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(100).default(3),
  /** How often a worker executing an approved call renews the call's heartbeat (in the run's Redis hash). */
  EXECUTION_HEARTBEAT_MS: milliseconds(1_000),
  /**
   * A call whose heartbeat is this old is taken for dead: a worker that took its run over marks it interrupted
   * and asks again. Fresher, it waits for the result. Keep it several heartbeats long (at least 3).
   */
  EXECUTION_STALE_MS: milliseconds(10_000),
  /**
   * How long a graceful stop (SIGTERM/SIGINT) may take to finish in-flight jobs and tool calls before the process
   * exits anyway (code 1), e.g. when Redis is gone and nothing can be recorded. What it cut short is handled as
   * after a crash: jobs are redelivered, an interrupted call is asked about again. A second signal exits at once.
   */
  SHUTDOWN_TIMEOUT_MS: milliseconds(60_000),
  /** Attempts of a job that throws (e.g. the model provider is down) before the run is failed. */
  JOB_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  JOB_BACKOFF_MS: z.coerce.number().int().min(0).max(600_000).default(1_000),
  /** Finished runs stay readable this long, then expire. */
  FINISHED_RUN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 3600),
  /**
   * Rotation of DECISION_SIGNING_SECRET: decisions signed with this earlier secret are still accepted, so the workers
   * can take the new secret first and the approval services after, with no decision refused in between.
   */
  DECISION_SIGNING_PREVIOUS_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * How often each replica looks for parked calls whose approval request was never confirmed on the queue (the job
   * that parked the run died or failed between the park and the publish), and publishes them; a call is looked at
   * once it has waited this long for its publish.
   */
  REQUEST_SWEEP_MS: milliseconds(5_000),
  /**
   * Seeds the simulated infrastructure of the `ops` agent and serves GET /demo/infra. Off unless asked: a deployment
   * has no simulated infrastructure; the demo, `npm start` and the compose file set it to true.
   */
  SEED_DEMO_INFRA: z.stringbool().default(false),
  /** Defaults for agents whose model provider is `openai` (the agents config may override them). */
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /**
   * POST /runs per principal and window (`<requests>/<window>`, or `off`): a person starts a handful of runs a
   * minute; a machine client (CI, an agent framework) acting for many users gets more. Past it: 429 + Retry-After.
   */
  RATE_LIMIT_RUN_STARTS: rateLimitSetting('30/1m'),
  RATE_LIMIT_RUN_STARTS_MACHINE: rateLimitSetting('600/1m'),
  /** POST /runs per source address, credential or not (many people may share one address behind a NAT). */
  RATE_LIMIT_RUN_STARTS_ADDRESS: rateLimitSetting('1200/1m'),
  /** The proxies whose X-Forwarded-For names the client's address (hop count or addresses/subnets); unset: none. */
  TRUST_PROXY: TrustProxySchema.optional(),
}).refine((env) => env.EXECUTION_STALE_MS >= 3 * env.EXECUTION_HEARTBEAT_MS, {
  path: ['EXECUTION_STALE_MS'],
  message: 'must be at least 3 x EXECUTION_HEARTBEAT_MS, or a slow heartbeat is taken for a dead worker',
});
export type AgentWorkerEnv = z.infer<typeof AgentWorkerEnvSchema>;

/** Everything the worker is configured with; one instance per app instance (several may share a process). */
export interface WorkerConfig {
  env: AgentWorkerEnv;
  agents: AgentsConfig;
  principals: PrincipalsConfig;
}

/** Injection token of the validated configuration. */
export const WORKER_CONFIG = Symbol('WorkerConfig');

/** The environment alone; throws a ConfigError naming the bad variable. */
export function loadWorkerEnv(raw: Record<string, string | undefined>): AgentWorkerEnv {
  return loadEnv(AgentWorkerEnvSchema, raw);
}

/** Throws a ConfigError naming the bad variable (or config field) instead of starting. */
export function loadWorkerConfig(raw: Record<string, string | undefined>): WorkerConfig {
  const env = loadWorkerEnv(raw);
  const agents = loadAgentsConfig(env.AGENTS_CONFIG);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', env.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  return { env, agents, principals };
}

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
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000).describe('The HTTP port.'),
  HOST: z.string().min(1).default('0.0.0.0').describe('The address the HTTP server listens on.'),
  AGENTS_CONFIG: z
    .string()
    .min(1)
    .default('config/agents.json')
    .describe('The agents config file (below), relative to the working directory.'),
  // Unset by default: a runbook's agents must exist in AGENTS_CONFIG, so none is loaded unless asked.
  RUNBOOKS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The directory of runbook definitions (`*.yaml`, `*.yml`, `*.json`); unset: no runbooks. Compose and the demo ' +
        'set `config/runbooks`. A missing directory or an invalid file refuses start-up.',
    ),
  WORKER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(16)
    .describe('Jobs each queue worker of the process handles at once.'),
  // Short in the tests of killed workers.
  STALLED_INTERVAL_MS: milliseconds(30_000).describe('How often BullMQ looks for jobs whose worker died.'),
  LOCK_DURATION_MS: milliseconds(30_000).describe(
    "How long a job's lock lives without renewal: a dead worker's job is redelivered after this.",
  ),
  MAX_STALLED_COUNT: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(3)
    .describe(
      'Redeliveries of a job whose lock lapsed (its worker died or starved) before it fails, and its run with it ' +
        '(visibly).',
    ),
  EXECUTION_HEARTBEAT_MS: milliseconds(1_000).describe(
    "How often a worker running an approved call renews the call's heartbeat.",
  ),
  EXECUTION_STALE_MS: milliseconds(10_000).describe(
    'A call `executing` with an older heartbeat belongs to a dead worker: the worker that takes its run over marks ' +
      'it interrupted and asks about it again (fresher, it waits for the result). At least 3 × ' +
      '`EXECUTION_HEARTBEAT_MS`.',
  ),
  // e.g. when Redis is gone and nothing can be recorded.
  SHUTDOWN_TIMEOUT_MS: milliseconds(60_000).describe(
    'How long a SIGTERM/SIGINT may take to finish in-flight jobs and tool calls; then the worker exits (code 1) and ' +
      'what it cut short is handled as after a crash. A second signal exits at once.',
  ),
  JOB_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(3)
    .describe('Attempts of a job that throws (e.g. the model provider is down) before its run is failed.'),
  JOB_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(1_000)
    .describe('The first delay between those attempts (exponential backoff).'),
  FINISHED_RUN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 3600)
    .describe('Finished runs stay readable this long, then expire.'),
  // The workers take the new secret first and the approval services after, so no decision is refused in between.
  DECISION_SIGNING_PREVIOUS_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      'During a rotation of `DECISION_SIGNING_SECRET`: decisions signed with this earlier secret are accepted too.',
    ),
  // The job that parked a run may die or fail between the park and the publish.
  REQUEST_SWEEP_MS: milliseconds(5_000).describe(
    'How often each replica publishes the requests of parked calls that their parking job left unpublished (a call ' +
      'waits this long first).',
  ),
  SEED_DEMO_INFRA: z
    .stringbool()
    .default(false)
    .describe(
      'Seed the simulated infrastructure of the `ops` tools (when the prefix has none) and serve `GET /demo/infra`; ' +
        'off, that route does not exist. A deployment has no simulated infrastructure: `npm run demo`, `npm start` ' +
        'and `docker-compose.yml` turn it on.',
    ),
  OPENAI_BASE_URL: z
    .url()
    .optional()
    .describe(
      'The default base URL of agents whose model provider is `openai` (the agents config may override it).',
    ),
  OPENAI_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('The API key of agents whose model provider is `openai` (only ever read from here).'),
  OPENAI_MODEL: z
    .string()
    .min(1)
    .default('gpt-4o-mini')
    .describe(
      'The default model of agents whose model provider is `openai` (the agents config may override it).',
    ),
  // A person starts a handful of runs a minute; a machine client (CI, an agent framework) acting for many users more.
  RATE_LIMIT_RUN_STARTS: rateLimitSetting('30/1m').describe(
    '`POST /runs` per person principal (429 with `Retry-After` past it).',
  ),
  RATE_LIMIT_RUN_STARTS_MACHINE: rateLimitSetting('600/1m').describe('`POST /runs` per machine principal.'),
  // Many people may share one address behind a NAT.
  RATE_LIMIT_RUN_STARTS_ADDRESS: rateLimitSetting('1200/1m').describe(
    '`POST /runs` per source address, with or without a valid credential.',
  ),
  TRUST_PROXY: TrustProxySchema.optional().describe(
    "The proxies whose `X-Forwarded-For` names the client's address, for the per-address rate limits; unset: none " +
      '(the TCP peer is the address).',
  ),
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

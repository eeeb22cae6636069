// Environment shared by both services. Each app extends this schema; nothing else reads process.env.
import { z } from 'zod';
import { DEFAULT_QUEUE_PREFIX } from '@countersign/contracts';
import { DEFAULT_QUEUE_SHARDS, MAX_QUEUE_SHARDS } from './queues/queue-shards';

export const BaseEnvSchema = z.object({
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379').describe('The Redis server.'),
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .describe('`host:port,host:port,…` of a Redis Cluster; when set, it is used instead of `REDIS_URL`.'),
  QUEUE_PREFIX: z
    .string()
    .min(1)
    .default(DEFAULT_QUEUE_PREFIX)
    .describe('BullMQ prefix of every queue; keep the braces (a Redis Cluster hash tag).'),
  // A run's jobs stay on the copy of its run ID, so the count must not change under queued jobs.
  QUEUE_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_QUEUE_SHARDS)
    .default(DEFAULT_QUEUE_SHARDS)
    .describe(
      'Copies of every queue, each under its own hash tag (a master of its own on a Redis Cluster). The same in ' +
        'every service; change it only with the queues drained.',
    ),
  // The approval service reads, verifies and trims all of them.
  AUDIT_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_QUEUE_SHARDS)
    .default(1)
    .describe(
      'Audit streams, each under its own hash tag; a writer keeps its chain in one of them. The same in every service.',
    ),
  KEY_PREFIX: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default('countersign')
    .describe('Prefix of every other Redis key (run state, approvals, audit, simulated infrastructure).'),
  DECISION_SIGNING_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .describe('HMAC secret of decisions: the approval service signs them, the workers verify them.'),
  // Without it, write access to Redis is not enough to rewrite the log unnoticed.
  AUDIT_SIGNING_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .describe(
      "HMAC secret of the audit log's chains and retention checkpoint; the same in every service (all of them write " +
        'the log).',
    ),
  AUDIT_SIGNING_PREVIOUS_SECRETS: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((secret) => secret.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().min(32, 'each must be at least 32 characters')))
    .optional()
    .describe('Earlier audit secrets during a rotation: they verify what they signed, and sign nothing new.'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('The pino log level.'),
  LOG_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write the log lines to this file (appended; its folder is created) instead of stdout. `npm start` sets ' +
        '`.countersign/logs/services.log` when unset.',
    ),
  PRINCIPALS_CONFIG: z
    .string()
    .min(1)
    .default('config/principals.json')
    .describe(
      'The principal directory (people, machine clients, their token hashes): a path, or inline JSON.',
    ),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe(
      'Serve `/metrics` on this port of `METRICS_HOST` without credentials (for a private scrape network), and not ' +
        'on the main port, where it needs a `metrics-reader` credential.',
    ),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Where `METRICS_PORT` listens (keep it on a private network).'),
});
export type BaseEnv = z.infer<typeof BaseEnvSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

/** Parses the environment; the error names every bad variable and says what it must be. */
export function loadEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  // An empty variable (`FOO=`, or compose's `${FOO:-}`) means unset, in every service alike.
  const set = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = schema.safeParse(set);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

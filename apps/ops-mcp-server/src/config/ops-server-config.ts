// The ops MCP server's environment, validated once at start-up. Nothing else reads process.env.
import { z } from 'zod';
import { BaseEnvSchema, loadEnv } from '@countersign/platform';

export const OpsServerEnvSchema = BaseEnvSchema.pick({
  REDIS_URL: true,
  REDIS_CLUSTER_NODES: true,
  KEY_PREFIX: true,
  LOG_LEVEL: true,
  PRINCIPALS_CONFIG: true,
}).extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3002),
  HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * Principals (PRINCIPALS_CONFIG) allowed to call the tools, comma-separated: the agent workers' machine client.
   * Everyone else is refused with 403, even with a valid token.
   */
  OPS_MCP_CALLERS: z
    .string()
    .min(1)
    .default('agent-worker')
    .transform((list) =>
      list
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  /** Milliseconds a restart takes (the service shows `restarting` meanwhile). */
  OPS_RESTART_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  /** Upper bound of `scale_service` replicas (part of the tool's JSON schema). */
  OPS_MAX_REPLICAS: z.coerce.number().int().min(1).max(1_000).default(20),
  /** Seeds the simulated infrastructure when this key prefix has none. */
  SEED_DEMO_INFRA: z.stringbool().default(true),
});
export type OpsServerConfig = z.infer<typeof OpsServerEnvSchema>;

/** Injection token of the OpsServerConfig. */
export const OPS_SERVER_CONFIG = Symbol('OpsServerConfig');

export function loadOpsServerConfig(env: Record<string, string | undefined>): OpsServerConfig {
  return loadEnv(OpsServerEnvSchema, env);
}

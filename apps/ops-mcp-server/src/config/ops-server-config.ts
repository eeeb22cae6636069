// The ops MCP server's environment, validated once at start-up. Nothing else reads process.env.
import { z } from 'zod';
import { opsToolSettings } from '@countersign/demo-infra';
import { BaseEnvSchema, loadEnv } from '@countersign/platform';

export const OpsServerEnvSchema = BaseEnvSchema.pick({
  REDIS_URL: true,
  REDIS_CLUSTER_NODES: true,
  KEY_PREFIX: true,
  LOG_LEVEL: true,
  LOG_FILE: true,
  PRINCIPALS_CONFIG: true,
}).extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3002).describe('The HTTP port (`/mcp`).'),
  HOST: z.string().min(1).default('0.0.0.0').describe('The address the HTTP server listens on.'),
  OPS_MCP_CALLERS: z
    .string()
    .min(1)
    .default('agent-worker')
    .transform((list) =>
      list
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .describe(
      "The principals (comma-separated IDs) allowed to call the tools: the agent workers' machine client, and " +
        '`mcp-gateway` when the gateway fronts this server. Everyone else gets 403, even with a valid token.',
    ),
  OPS_RESTART_MS: opsToolSettings.restartMs(z.coerce.number()),
  OPS_MAX_REPLICAS: opsToolSettings.maxReplicas(z.coerce.number()),
  SEED_DEMO_INFRA: z
    .stringbool()
    .default(true)
    .describe('Seed the simulated infrastructure when this key prefix has none.'),
});
export type OpsServerConfig = z.infer<typeof OpsServerEnvSchema>;

/** Injection token of the OpsServerConfig. */
export const OPS_SERVER_CONFIG = Symbol('OpsServerConfig');

export function loadOpsServerConfig(env: Record<string, string | undefined>): OpsServerConfig {
  return loadEnv(OpsServerEnvSchema, env);
}

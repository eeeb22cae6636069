// The MCP gateway's environment, validated once at start-up. Nothing else reads process.env (the config's secret and
// setting references are read from the same map, given to the tool providers' SecretSource).
import { z } from 'zod';
import { BaseEnvSchema, loadEnv } from '@countersign/platform';

export const GatewayEnvSchema = BaseEnvSchema.pick({
  REDIS_URL: true,
  REDIS_CLUSTER_NODES: true,
  KEY_PREFIX: true,
  LOG_LEVEL: true,
  PRINCIPALS_CONFIG: true,
  AUDIT_SIGNING_SECRET: true,
  AUDIT_SHARDS: true,
})
  .extend({
    PORT: z.coerce.number().int().min(0).max(65_535).default(3003),
    HOST: z.string().min(1).default('0.0.0.0'),
    /** The downstream MCP servers, RBAC, the hold limit (see GatewayConfigSchema): a path, or inline JSON. */
    GATEWAY_CONFIG: z.string().min(1).default('config/gateway.json'),
    /** The approval service whose approvals API (`/external-approvals`) decides confirm-tier calls. */
    APPROVAL_SERVICE_URL: z.url().default('http://127.0.0.1:3001'),
    /**
     * The gateway's own bearer token: a machine principal with the `approvals-client` role and an `actAs` entry for
     * every principal that calls through it (the approvals it submits are theirs, submitted by the gateway).
     */
    GATEWAY_TOKEN: z.string().min(16, 'must be at least 16 characters'),
    /** `http`: streamable HTTP at /mcp, every request authenticated; `stdio`: one client (a desktop app) on stdin/stdout. */
    GATEWAY_TRANSPORT: z.enum(['http', 'stdio']).default('http'),
    /** stdio only: the bearer token of the principal the one client acts as (stdio carries no credentials). */
    GATEWAY_CLIENT_TOKEN: z.string().min(1).optional(),
  })
  .superRefine((env, ctx) => {
    if (env.GATEWAY_TRANSPORT === 'stdio' && !env.GATEWAY_CLIENT_TOKEN)
      ctx.addIssue({
        code: 'custom',
        path: ['GATEWAY_CLIENT_TOKEN'],
        message: 'is required with GATEWAY_TRANSPORT=stdio: it names the principal the client acts as',
      });
  });
export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

export function loadGatewayEnv(env: Record<string, string | undefined>): GatewayEnv {
  return loadEnv(GatewayEnvSchema, env);
}

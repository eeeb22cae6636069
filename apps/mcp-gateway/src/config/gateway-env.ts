// The MCP gateway's environment, validated once at start-up. Nothing else reads process.env (the config's secret and
// setting references are read from the same map, given to the tool providers' SecretSource).
import { z } from 'zod';
import { BaseEnvSchema, loadEnv, rateLimitSetting } from '@countersign/platform';

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
    /**
     * HTTP sessions one principal may hold at once. Opening one more ends that principal's own longest-idle session
     * (its client gets 404 and opens another); another principal's session is never ended for it.
     */
    MAX_SESSIONS_PER_PRINCIPAL: z.coerce.number().int().min(1).max(100_000).default(32),
    /** HTTP sessions of all principals together, a bound on memory: past it a new session is refused (503). */
    MAX_SESSIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
    /**
     * Session opens (`initialize` over HTTP) per principal and window (`<requests>/<window>`, or `off`): a client opens
     * one per conversation or restart; a machine principal (an agent framework) more. Past it: 429 + Retry-After.
     */
    RATE_LIMIT_SESSION_OPENS: rateLimitSetting('30/1m'),
    RATE_LIMIT_SESSION_OPENS_MACHINE: rateLimitSetting('300/1m'),
    /**
     * Tool calls (`tools/call`, a call made as a task included) per principal and window, whatever their tier: over
     * HTTP past it 429 + Retry-After, on stdio a JSON-RPC error saying when to retry. Listing and task polls are free.
     */
    RATE_LIMIT_TOOL_CALLS: rateLimitSetting('300/1m'),
    RATE_LIMIT_TOOL_CALLS_MACHINE: rateLimitSetting('3000/1m'),
  })
  .superRefine((env, ctx) => {
    if (env.MAX_SESSIONS < env.MAX_SESSIONS_PER_PRINCIPAL)
      ctx.addIssue({
        code: 'custom',
        path: ['MAX_SESSIONS'],
        message: 'must be at least MAX_SESSIONS_PER_PRINCIPAL',
      });
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

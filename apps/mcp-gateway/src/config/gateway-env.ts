// The MCP gateway's environment, validated once at start-up. Nothing else reads process.env (the config's secret and
// setting references are read from the same map, given to the tool providers' SecretSource).
import { z } from 'zod';
import { BaseEnvSchema, loadEnv, rateLimitSetting } from '@countersign/platform';

export const GatewayEnvSchema = BaseEnvSchema.pick({
  REDIS_URL: true,
  REDIS_CLUSTER_NODES: true,
  KEY_PREFIX: true,
  LOG_LEVEL: true,
  LOG_FILE: true,
  PRINCIPALS_CONFIG: true,
  AUDIT_SIGNING_SECRET: true,
  AUDIT_SHARDS: true,
  METRICS_PORT: true,
  METRICS_HOST: true,
})
  .extend({
    PORT: z.coerce
      .number()
      .int()
      .min(0)
      .max(65_535)
      .default(3003)
      .describe('The HTTP port (`/mcp`, `GET /health`, and `GET /metrics` unless `METRICS_PORT` is set).'),
    HOST: z.string().min(1).default('0.0.0.0').describe('The address the HTTP server listens on.'),
    GATEWAY_CONFIG: z
      .string()
      .min(1)
      .default('config/gateway.json')
      .describe('The downstream MCP servers, RBAC and the hold limit (below): a path, or inline JSON.'),
    APPROVAL_SERVICE_URL: z
      .url()
      .default('http://127.0.0.1:3001')
      .describe(
        'The approval service whose approvals API (`/external-approvals`) decides confirm-tier calls.',
      ),
    // The approvals it submits are the callers', submitted by the gateway.
    GATEWAY_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters')
      .describe(
        "The gateway's own bearer token: a machine principal with the `approvals-client` role and an `actAs` entry " +
          'for every principal that calls through it.',
      ),
    GATEWAY_TRANSPORT: z
      .enum(['http', 'stdio'])
      .default('http')
      .describe(
        '`http`: streamable HTTP at `/mcp`, every request authenticated; `stdio`: one client (a desktop app) on ' +
          'stdin/stdout.',
      ),
    GATEWAY_CLIENT_TOKEN: z
      .string()
      .min(1)
      .optional()
      .describe(
        'With `stdio` (required there): the bearer token of the principal the one client acts as (stdio carries no ' +
          'credentials).',
      ),
    MAX_SESSIONS_PER_PRINCIPAL: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(32)
      .describe(
        "HTTP sessions one principal may hold at once: opening one more ends that principal's own longest-idle " +
          "session (its client gets 404 and opens another), never another principal's.",
      ),
    MAX_SESSIONS: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1000)
      .describe(
        'HTTP sessions of all principals together, a bound on memory (at least `MAX_SESSIONS_PER_PRINCIPAL`): past ' +
          'it a new session is refused (503) and none is ended.',
      ),
    // A client opens one per conversation or restart; a machine principal (an agent framework) more.
    RATE_LIMIT_SESSION_OPENS: rateLimitSetting('30/1m').describe(
      'Session opens (`initialize` over HTTP) per person principal (429 with `Retry-After` past it).',
    ),
    RATE_LIMIT_SESSION_OPENS_MACHINE: rateLimitSetting('300/1m').describe(
      'Session opens per machine principal.',
    ),
    RATE_LIMIT_TOOL_CALLS: rateLimitSetting('300/1m').describe(
      'Tool calls (`tools/call`, a call made as a task included) per person principal, whatever their tier: over ' +
        'HTTP 429 with `Retry-After` past it, on stdio a JSON-RPC error saying when to retry. Listing tools and ' +
        'polling tasks are not counted.',
    ),
    RATE_LIMIT_TOOL_CALLS_MACHINE: rateLimitSetting('3000/1m').describe('Tool calls per machine principal.'),
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

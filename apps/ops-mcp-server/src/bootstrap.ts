// The repository's own MCP server: the demo's ops tools (status, list, restart, scale, delete a volume) over the
// simulated infrastructure in Redis, served over streamable HTTP at /mcp to the principals OPS_MCP_CALLERS names.
// The demo and the shipped agents config reach these tools through the worker's MCP provider path, like any server.
// Tiers are not this server's business (Countersign's config sets them); it only states honest hints.
import type { IncomingMessage } from 'node:http';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Tier } from '@countersign/contracts';
import { InfraStore, opsTools } from '@countersign/demo-infra';
import {
  Authenticator,
  createLogger,
  createRedis,
  loadJsonConfig,
  PrincipalsConfigSchema,
  redisAnswers,
} from '@countersign/platform';
import { McpHttpEndpoint, serveMcpHttp, servedTool } from '@countersign/tool-providers';
import { loadOpsServerConfig } from './config/ops-server-config';

export interface RunningOpsMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3002/mcp. */
  url: string;
  close(): Promise<void>;
}

/** What each tool does, as hints for clients (read-only, destructive); Countersign never lowers a tier for them. */
const HINTS: Record<Tier, ToolAnnotations> = {
  auto: { readOnlyHint: true, openWorldHint: false },
  confirm: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  manual_only: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
};

/** Throws a ConfigError naming the bad variable instead of starting. */
export async function startOpsMcpServer(
  env: Record<string, string | undefined>,
  options: { port?: number; host?: string } = {},
): Promise<RunningOpsMcpServer> {
  const config = loadOpsServerConfig(env);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', config.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  const logger = createLogger('ops-mcp-server', config.LOG_LEVEL);
  const redis = createRedis(
    { url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES },
    { name: 'ops-mcp-server', logger },
  );
  const infra = new InfraStore(redis, config.KEY_PREFIX);
  if (config.SEED_DEMO_INFRA) await infra.seedDefaults();
  const tools = opsTools(infra, {
    restartMs: config.OPS_RESTART_MS,
    maxReplicas: config.OPS_MAX_REPLICAS,
  }).map((tool) => {
    const served = servedTool(tool, HINTS[tool.tier ?? 'auto']);
    return {
      ...served,
      call: async (args: Record<string, unknown>, request: Parameters<typeof served.call>[1]) => {
        const where = { tool: tool.name, caller: request.caller, ...request.meta };
        try {
          const result = await served.call(args, request);
          logger.info(where, 'tool called');
          return result;
        } catch (error) {
          logger.warn({ ...where, err: (error as Error).message }, 'tool call failed');
          throw error;
        }
      },
    };
  });

  const authenticator = new Authenticator(principals);
  const callers = new Set(config.OPS_MCP_CALLERS);
  const endpoint = new McpHttpEndpoint({
    name: 'countersign-ops',
    version: '0.1.0',
    tools: () => tools,
    logger,
    authenticate: async (req: IncomingMessage) => {
      const found = await authenticator.fromAuthorizationHeader(req.headers.authorization);
      if (!found?.ok) {
        logger.warn({ reason: found?.reason ?? 'no credential' }, 'request refused');
        return { status: 401 as const, message: found?.reason ?? 'a bearer token is required' };
      }
      if (!callers.has(found.principal.id)) {
        logger.warn({ principal: found.principal.id }, 'request refused: not one of OPS_MCP_CALLERS');
        return { status: 403 as const, message: `${found.principal.id} may not call these tools` };
      }
      return found.principal.id;
    },
  });

  const server = await serveMcpHttp({
    endpoint,
    host: options.host ?? config.HOST,
    port: options.port ?? config.PORT,
    healthy: () => redisAnswers(redis),
  });
  const { url } = server;
  logger.info({ url, callers: [...callers], keyPrefix: config.KEY_PREFIX }, 'ops MCP server listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await redis.quit().catch(() => undefined);
      })()),
  };
}

// Countersign's MCP gateway: an MCP server (streamable HTTP at /mcp, or stdio for a desktop client) that fronts the
// configured MCP servers. Clients list and call their tools as a principal of PRINCIPALS_CONFIG; every call goes
// through the policy pipeline, and confirm-tier calls through the approval service's approvals API.
import type { IncomingMessage } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import pino from 'pino';
import {
  Authenticator,
  ConfigError,
  createLogger,
  createRedis,
  hasRole,
  loadJsonConfig,
  type Logger,
  type Principal,
  PrincipalsConfigSchema,
  RateLimiter,
  redisAnswers,
  redisRateLimitStorage,
} from '@countersign/platform';
import { AuditKeyring, AuditLog } from '@countersign/audit';
import { CountersignClient } from '@countersign/sdk';
import { McpHttpEndpoint, SecretSource, serveMcpHttp, ToolProviders } from '@countersign/tool-providers';
import { CallRecordStore } from './approvals/call-record-store';
import { ConfirmedCalls } from './approvals/confirmed-calls';
import { GatewayCalls } from './calls/gateway-calls';
import { ToolRelay } from './calls/tool-relay';
import { GatewayConfigSchema } from './config/gateway-config.schema';
import { type GatewayEnv, loadGatewayEnv } from './config/gateway-env';
import { gatewayRateLimits } from './config/rate-limits';
import { GATEWAY_SERVER_INFO, gatewayServer, type GatewayServerDeps } from './mcp/gateway-server';
import { PrincipalLimits } from './mcp/principal-limits';
import { GatewayCatalog } from './tools/gateway-catalog';

export interface RunningMcpGateway {
  /** The MCP endpoint (HTTP mode), e.g. http://127.0.0.1:3003/mcp. */
  url?: string;
  /** Resolves when the gateway stopped (stdio: when the client closed stdin). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export interface GatewayStartOptions {
  port?: number;
  host?: string;
  /** stdio mode: the client's streams (default: this process's stdin and stdout). */
  stdin?: Readable;
  stdout?: Writable;
}

/** Throws a ConfigError naming the bad variable or field instead of starting. */
export async function startMcpGateway(
  envVars: Record<string, string | undefined>,
  options: GatewayStartOptions = {},
): Promise<RunningMcpGateway> {
  const env = loadGatewayEnv(envVars);
  const config = loadJsonConfig('GATEWAY_CONFIG', env.GATEWAY_CONFIG, GatewayConfigSchema);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', env.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  // On stdio, stdout is the protocol: every log line goes to stderr.
  const logger = createLogger(
    'mcp-gateway',
    env.LOG_LEVEL,
    env.GATEWAY_TRANSPORT === 'stdio' ? pino.destination(2) : undefined,
  );
  const authenticator = new Authenticator(principals);
  const self = await gatewayPrincipal(authenticator, env);
  checkUsers(config.users, authenticator, self, logger);

  const redis = createRedis(
    { url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES },
    { name: 'mcp-gateway', logger },
  );
  const audit = new AuditLog(redis, env.KEY_PREFIX, 'mcp-gateway', AuditKeyring.fromEnv(env), {
    shards: env.AUDIT_SHARDS,
  });
  const secrets = new SecretSource(envVars);
  const providers = new ToolProviders({ mcpServers: config.mcpServers, httpTools: {} }, { secrets, logger });
  const catalog = new GatewayCatalog(providers, config, config.tasks.enabled, logger);
  const relay = new ToolRelay(secrets);
  const confirmed = new ConfirmedCalls(
    new CountersignClient({ baseUrl: env.APPROVAL_SERVICE_URL, token: env.GATEWAY_TOKEN }),
    new CallRecordStore(redis, env.KEY_PREFIX),
    catalog,
    relay,
    { self: self.id, resultTtlMs: config.resultTtlMs },
    logger,
  );
  const calls = new GatewayCalls(catalog, relay, confirmed, audit, { principal: self.id }, logger);
  const deps: GatewayServerDeps = { catalog, calls, config, logger };
  const limits = new PrincipalLimits(
    new RateLimiter(gatewayRateLimits(env, logger), redisRateLimitStorage(redis)),
    authenticator.directory,
    logger,
  );
  await providers.start();

  const stopAll = async () => {
    await providers.close();
    await redis.quit().catch(() => undefined);
  };
  try {
    return env.GATEWAY_TRANSPORT === 'stdio'
      ? await serveStdio(env, authenticator, { ...deps, callLimits: limits }, options, stopAll)
      : await serveHttp(env, authenticator, deps, limits, options, stopAll, redis);
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The gateway's own principal (GATEWAY_TOKEN), which must be an approvals client. */
async function gatewayPrincipal(authenticator: Authenticator, env: GatewayEnv): Promise<Principal> {
  const found = await authenticator.fromBearer(env.GATEWAY_TOKEN);
  if (!found.ok)
    throw new ConfigError(`invalid configuration:\n  GATEWAY_TOKEN: ${found.reason} (PRINCIPALS_CONFIG)`);
  if (!hasRole(found.principal, 'approvals-client'))
    throw new ConfigError(
      `invalid configuration:\n  GATEWAY_TOKEN: principal "${found.principal.id}" needs the approvals-client role`,
    );
  return found.principal;
}

/** Users of the RBAC config the gateway may not act for would have every confirm-tier call refused: say so at start. */
function checkUsers(
  users: Record<string, string[]>,
  authenticator: Authenticator,
  self: Principal,
  logger: Logger,
): void {
  for (const user of Object.keys(users)) {
    if (!authenticator.directory.get(user))
      logger.warn(
        { user },
        'GATEWAY_CONFIG users: not a principal of PRINCIPALS_CONFIG; nobody can call as it',
      );
    else if (user !== self.id && !self.actAs.includes('*') && !self.actAs.includes(user))
      logger.warn(
        { user, gateway: self.id },
        "the gateway's principal has no actAs entry for this user: its confirm-tier calls will be refused",
      );
  }
}

async function serveHttp(
  env: GatewayEnv,
  authenticator: Authenticator,
  deps: GatewayServerDeps,
  limits: PrincipalLimits,
  options: GatewayStartOptions,
  stopAll: () => Promise<void>,
  redis: ReturnType<typeof createRedis>,
): Promise<RunningMcpGateway> {
  const { logger } = deps;
  const endpoint = new McpHttpEndpoint({
    ...GATEWAY_SERVER_INFO,
    logger,
    // Without resumable streams, an answer to a client that went away is lost: its held call must not run.
    cancelOnDisconnect: true,
    // One principal can fill only its own places, and end only its own sessions.
    maxSessionsPerCaller: env.MAX_SESSIONS_PER_PRINCIPAL,
    maxSessions: env.MAX_SESSIONS,
    rateLimit: (caller, request) => limits.check(caller, request),
    server: (caller) => gatewayServer(authenticator.directory.get(caller)!, deps),
    authenticate: async (req: IncomingMessage) => {
      const found = await authenticator.fromAuthorizationHeader(req.headers.authorization);
      if (found?.ok) return found.principal.id;
      logger.warn({ reason: found?.reason ?? 'no credential' }, 'request refused');
      return { status: 401 as const, message: found?.reason ?? 'a bearer token is required' };
    },
  });
  deps.catalog.onChange(() => void endpoint.notifyToolsChanged());
  const server = await serveMcpHttp({
    endpoint,
    host: options.host ?? env.HOST,
    port: options.port ?? env.PORT,
    healthy: () => redisAnswers(redis),
  });
  const { url } = server;
  logger.info({ url, tools: deps.catalog.pipeline.registry.names().length }, 'MCP gateway listening');

  let stopped!: () => void;
  const closed = new Promise<void>((resolve) => (stopped = resolve));
  let closing: Promise<void> | undefined;
  return {
    url,
    closed,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await stopAll();
        stopped();
      })()),
  };
}

async function serveStdio(
  env: GatewayEnv,
  authenticator: Authenticator,
  deps: GatewayServerDeps,
  options: GatewayStartOptions,
  stopAll: () => Promise<void>,
): Promise<RunningMcpGateway> {
  const found = await authenticator.fromBearer(env.GATEWAY_CLIENT_TOKEN!);
  if (!found.ok)
    throw new ConfigError(
      `invalid configuration:\n  GATEWAY_CLIENT_TOKEN: ${found.reason} (PRINCIPALS_CONFIG)`,
    );
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const server = gatewayServer(found.principal, deps);
  deps.catalog.onChange(() => void server.sendToolListChanged().catch(() => undefined));
  let stopped!: () => void;
  const closed = new Promise<void>((resolve) => (stopped = resolve));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await server.close().catch(() => undefined);
      await stopAll();
      stopped();
    })());
  // The client went away (it closed our stdin): what it was waiting for stops, and nothing runs for it.
  stdin.once('end', () => void close());
  await server.connect(new StdioServerTransport(stdin, stdout));
  deps.logger.info({ principal: found.principal.id }, 'MCP gateway serving one client on stdio');
  return { closed, close };
}

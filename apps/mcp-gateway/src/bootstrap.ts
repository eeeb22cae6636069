// Countersign's MCP gateway: an MCP server (streamable HTTP at /mcp, or stdio for a desktop client) that fronts the
// configured MCP servers. Clients list and call their tools as a principal of PRINCIPALS_CONFIG; every call goes
// through the policy pipeline, and confirm-tier calls through the approval service's approvals API. Its services live
// in a Nest application context (McpGatewayModule); the transport is served beside it (see transports/).
import 'reflect-metadata';
import type { Readable, Writable } from 'node:stream';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import {
  Authenticator,
  createLogger,
  type Logger,
  type MetricsServer,
  PinoNestLogger,
  startMetricsServer,
} from '@countersign/platform';
import { SecretSource, ToolProviders } from '@countersign/tool-providers';
import { type GatewaySettings, loadGatewaySettings } from './config/gateway-settings';
import { GatewayMetrics } from './core/gateway-metrics';
import { checkUsers, gatewayPrincipal } from './core/gateway-principal';
import { type GatewayWiring, McpGatewayModule } from './mcp-gateway.module';
import { GatewayHttp } from './transports/gateway-http';
import { GatewayStdio } from './transports/gateway-stdio';

export interface RunningMcpGateway {
  /** The MCP endpoint (HTTP mode), e.g. http://127.0.0.1:3003/mcp. */
  url?: string;
  /** Where /metrics is served without credentials, when METRICS_PORT is set. */
  metricsUrl?: string;
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

/** Throws a ConfigError naming the bad variable or field instead of starting. Each call starts one more gateway. */
export async function startMcpGateway(
  envVars: Record<string, string | undefined>,
  options: GatewayStartOptions = {},
): Promise<RunningMcpGateway> {
  const wiring = await checkedWiring(loadGatewaySettings(envVars));
  const app = await NestFactory.createApplicationContext(McpGatewayModule.register(wiring), {
    logger: new PinoNestLogger(wiring.logger),
    abortOnError: false,
  });
  let stopped!: () => void;
  const closed = new Promise<void>((resolve) => (stopped = resolve));
  let transport: { url?: string; close(): Promise<void> } | undefined;
  let metrics: MetricsServer | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await Promise.all([transport?.close(), metrics?.close()]);
      await app.close();
      stopped();
    })());
  try {
    const { env } = wiring.settings;
    // With METRICS_PORT, /metrics on a port of its own (in either transport), and not on the HTTP port.
    if (env.METRICS_PORT !== undefined)
      metrics = await startMetricsServer(
        app.get(GatewayMetrics).registry,
        env.METRICS_HOST,
        env.METRICS_PORT,
      );
    transport = await serve(app, wiring.settings, options, close);
  } catch (error) {
    await metrics?.close();
    await app.close();
    throw error;
  }
  return { url: transport.url, metricsUrl: metrics?.url, closed, close };
}

/** Everything checked before anything connects: who the gateway is, and its servers' config. */
async function checkedWiring(settings: GatewaySettings): Promise<GatewayWiring> {
  const { env, config } = settings;
  const logger = gatewayLogger(settings);
  const authenticator = new Authenticator(settings.principals);
  const self = await gatewayPrincipal(authenticator, env);
  checkUsers(config.users, authenticator, self, logger);
  const secrets = new SecretSource(settings.vars);
  const providers = new ToolProviders({ mcpServers: config.mcpServers, httpTools: {} }, { secrets, logger });
  return { settings, logger, authenticator, self, secrets, providers };
}

/** On stdio, stdout is the protocol: every log line goes to stderr (or to LOG_FILE when set). */
function gatewayLogger({ env }: GatewaySettings): Logger {
  return createLogger(
    'mcp-gateway',
    env.LOG_LEVEL,
    env.LOG_FILE ?? (env.GATEWAY_TRANSPORT === 'stdio' ? pino.destination(2) : undefined),
  );
}

async function serve(
  app: INestApplicationContext,
  { env }: GatewaySettings,
  options: GatewayStartOptions,
  close: () => Promise<void>,
): Promise<{ url?: string; close(): Promise<void> }> {
  if (env.GATEWAY_TRANSPORT === 'http')
    return app.get(GatewayHttp).listen(options.host ?? env.HOST, options.port ?? env.PORT);
  // The client went away (it closed our stdin): what it was waiting for stops, and nothing runs for it.
  return app
    .get(GatewayStdio)
    .serve(options.stdin ?? process.stdin, options.stdout ?? process.stdout, () => void close());
}

// The gateway over streamable HTTP: `/mcp` (every request authenticated, sessions capped and rate limited per
// principal), a public `GET /health` and, unless METRICS_PORT serves it apart, `GET /metrics` for a `metrics-reader`, on a plain Node HTTP server beside the Nest context, the same endpoint code the
// bare SDK proxy of the bench uses, so the gateway's HTTP path costs what the SDK's does (docs/internals/architecture.md).
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import {
  Authenticator,
  type Logger,
  metricsRoute,
  type RedisClient,
  redisAnswers,
} from '@countersign/platform';
import { McpHttpEndpoint, type McpHttpServer, serveMcpHttp } from '@countersign/tool-providers';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { GatewayMetrics } from '../core/gateway-metrics';
import { LOGGER, REDIS } from '../core/gateway-tokens';
import { GATEWAY_SERVER_INFO, GatewayServer } from '../mcp/gateway-server';
import { PrincipalLimits } from '../mcp/principal-limits';
import { GatewayCatalog } from '../tools/gateway-catalog';

@Injectable()
export class GatewayHttp {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly limits: PrincipalLimits,
    private readonly servers: GatewayServer,
    private readonly catalog: GatewayCatalog,
    @Inject(GATEWAY_SETTINGS) private readonly settings: GatewaySettings,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Listens on `host`:`port` (0: a free one). Closing the server ends its sessions. */
  async listen(host: string, port: number): Promise<McpHttpServer> {
    const endpoint = this.endpoint();
    this.catalog.onChange(() => void endpoint.notifyToolsChanged());
    const server = await serveMcpHttp({
      endpoint,
      host,
      port,
      healthy: () => redisAnswers(this.redis),
      // With METRICS_PORT, /metrics is served on that port only (bootstrap), not here.
      ...(this.settings.env.METRICS_PORT === undefined
        ? {
            metrics: metricsRoute(this.metrics.registry, (req) =>
              this.authenticator.fromAuthorizationHeader(req.headers.authorization),
            ),
          }
        : {}),
    });
    this.logger.info(
      { url: server.url, tools: this.catalog.pipeline.registry.names().length },
      'MCP gateway listening',
    );
    return server;
  }

  private endpoint(): McpHttpEndpoint {
    const { env } = this.settings;
    const { directory } = this.authenticator;
    return new McpHttpEndpoint({
      ...GATEWAY_SERVER_INFO,
      logger: this.logger,
      // Without resumable streams, an answer to a client that went away is lost: its held call must not run.
      cancelOnDisconnect: true,
      // One principal can fill only its own places, and end only its own sessions.
      maxSessionsPerCaller: env.MAX_SESSIONS_PER_PRINCIPAL,
      maxSessions: env.MAX_SESSIONS,
      rateLimit: (caller, request) => this.limits.check(caller, request),
      // The endpoint counts tool calls itself (rateLimit), before they reach the session's server.
      server: (caller) => this.servers.forSession(directory.get(caller)!, { countToolCalls: false }),
      authenticate: (req) => this.authenticate(req),
    });
  }

  private async authenticate(req: IncomingMessage) {
    const found = await this.authenticator.fromAuthorizationHeader(req.headers.authorization);
    if (found?.ok) return found.principal.id;
    this.logger.warn({ reason: found?.reason ?? 'no credential' }, 'request refused');
    return { status: 401 as const, message: found?.reason ?? 'a bearer token is required' };
  }
}

// The ops tools over streamable HTTP at /mcp (and a public GET /health), on a plain Node HTTP server beside the Nest
// context, as the MCP gateway serves: only the principals OPS_MCP_CALLERS names get in.
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { Authenticator, type Logger, type RedisClient, redisAnswers } from '@countersign/platform';
import { McpHttpEndpoint, type McpHttpServer, serveMcpHttp } from '@countersign/tool-providers';
import { OPS_SERVER_CONFIG, type OpsServerConfig } from '../config/ops-server-config';
import { LOGGER, REDIS } from '../core/ops-server-tokens';
import { ServedOpsTools } from '../tools/served-ops-tools';

@Injectable()
export class OpsHttp {
  private readonly callers: Set<string>;

  constructor(
    private readonly authenticator: Authenticator,
    private readonly served: ServedOpsTools,
    @Inject(OPS_SERVER_CONFIG) private readonly config: OpsServerConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.callers = new Set(config.OPS_MCP_CALLERS);
  }

  /** Listens on `host`:`port` (0: a free one). Closing the server ends its sessions. */
  async listen(host: string, port: number): Promise<McpHttpServer> {
    const endpoint = new McpHttpEndpoint({
      name: 'countersign-ops',
      version: '0.1.0',
      tools: () => this.served.tools,
      logger: this.logger,
      authenticate: (req) => this.authenticate(req),
    });
    const server = await serveMcpHttp({ endpoint, host, port, healthy: () => redisAnswers(this.redis) });
    this.logger.info(
      { url: server.url, callers: [...this.callers], keyPrefix: this.config.KEY_PREFIX },
      'ops MCP server listening',
    );
    return server;
  }

  private async authenticate(req: IncomingMessage) {
    const found = await this.authenticator.fromAuthorizationHeader(req.headers.authorization);
    if (!found?.ok) {
      this.logger.warn({ reason: found?.reason ?? 'no credential' }, 'request refused');
      return { status: 401 as const, message: found?.reason ?? 'a bearer token is required' };
    }
    if (!this.callers.has(found.principal.id)) {
      this.logger.warn({ principal: found.principal.id }, 'request refused: not one of OPS_MCP_CALLERS');
      return { status: 403 as const, message: `${found.principal.id} may not call these tools` };
    }
    return found.principal.id;
  }
}

// The gateway on stdin/stdout for one desktop client, as the principal GATEWAY_CLIENT_TOKEN names (stdio carries no
// credentials). Its tool calls are counted against that principal's rate limit by the session's server itself.
import type { Readable, Writable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Authenticator, ConfigError, type Logger } from '@countersign/platform';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { LOGGER } from '../core/gateway-tokens';
import { GatewayServer } from '../mcp/gateway-server';
import { GatewayCatalog } from '../tools/gateway-catalog';

export interface StdioSession {
  /** Closes the client's session (its waiting calls stop, and nothing runs for it). */
  close(): Promise<void>;
}

@Injectable()
export class GatewayStdio {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly servers: GatewayServer,
    private readonly catalog: GatewayCatalog,
    @Inject(GATEWAY_SETTINGS) private readonly settings: GatewaySettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Serves the client on its streams; `onEnd` is called when it went away (it closed our stdin). Throws a ConfigError
   * naming GATEWAY_CLIENT_TOKEN when that token names no principal.
   */
  async serve(stdin: Readable, stdout: Writable, onEnd: () => void): Promise<StdioSession> {
    const found = await this.authenticator.fromBearer(this.settings.env.GATEWAY_CLIENT_TOKEN!);
    if (!found.ok)
      throw new ConfigError(
        `invalid configuration:\n  GATEWAY_CLIENT_TOKEN: ${found.reason} (PRINCIPALS_CONFIG)`,
      );
    const server = this.servers.forSession(found.principal, { countToolCalls: true });
    this.catalog.onChange(() => void server.sendToolListChanged().catch(() => undefined));
    stdin.once('end', onEnd);
    await server.connect(new StdioServerTransport(stdin, stdout));
    this.logger.info({ principal: found.principal.id }, 'MCP gateway serving one client on stdio');
    return { close: () => server.close().catch(() => undefined) };
  }
}

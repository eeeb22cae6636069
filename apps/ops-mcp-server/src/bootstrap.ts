// The repository's own MCP server: the demo's ops tools (status, list, restart, scale, delete a volume) over the
// simulated infrastructure in Redis, served over streamable HTTP at /mcp to the principals OPS_MCP_CALLERS names.
// The demo and the shipped agents config reach these tools through the worker's MCP provider path, like any server.
// Its services live in a Nest application context (OpsMcpServerModule); the endpoint is served beside it.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger, loadJsonConfig, PinoNestLogger, PrincipalsConfigSchema } from '@countersign/platform';
import type { McpHttpServer } from '@countersign/tool-providers';
import { loadOpsServerConfig } from './config/ops-server-config';
import { OpsMcpServerModule } from './ops-mcp-server.module';
import { OpsHttp } from './transports/ops-http';

export interface RunningOpsMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3002/mcp. */
  url: string;
  close(): Promise<void>;
}

/** Throws a ConfigError naming the bad variable instead of starting. Each call starts one more server. */
export async function startOpsMcpServer(
  env: Record<string, string | undefined>,
  options: { port?: number; host?: string } = {},
): Promise<RunningOpsMcpServer> {
  const config = loadOpsServerConfig(env);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', config.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  const logger = createLogger('ops-mcp-server', config.LOG_LEVEL, config.LOG_FILE);
  const app = await NestFactory.createApplicationContext(
    OpsMcpServerModule.register({ config, principals, logger }),
    { logger: new PinoNestLogger(logger), abortOnError: false },
  );
  let server: McpHttpServer;
  try {
    server = await app.get(OpsHttp).listen(options.host ?? config.HOST, options.port ?? config.PORT);
  } catch (error) {
    await app.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await app.close();
      })()),
  };
}

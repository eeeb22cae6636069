// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/ops-mcp-server/src/main.ts`.
import { ConfigError, createLogger } from '@countersign/platform';
import { startOpsMcpServer } from './bootstrap';

async function main(): Promise<void> {
  const server = await startOpsMcpServer(process.env);
  const logger = createLogger('ops-mcp-server');
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? '' : 'start failed: '}${(error as Error).message}\n`,
  );
  process.exit(1);
});

// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/mcp-gateway/src/main.ts`, or
// `node dist/apps/mcp-gateway/src/main.js` once built. GATEWAY_TRANSPORT=stdio serves one client on stdin/stdout.
import { ConfigError, createLogger } from '@countersign/platform';
import { startMcpGateway } from './bootstrap';

async function main(): Promise<void> {
  const gateway = await startMcpGateway(process.env);
  // stdout may be the protocol (stdio): this process's own lines go to stderr.
  const logger = createLogger('mcp-gateway', 'info', process.stderr);
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await gateway.closed;
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? '' : 'start failed: '}${(error as Error).message}\n`,
  );
  process.exit(1);
});

// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/approval-service/src/main.ts`.
import { startApprovalService } from './bootstrap';

async function main(): Promise<void> {
  let service;
  try {
    service = await startApprovalService(process.env);
  } catch (error) {
    process.stderr.write(`approval-service failed to start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const running = service;
  const stop = (signal: string) => {
    process.stderr.write(`approval-service: ${signal}, shutting down\n`);
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

void main();

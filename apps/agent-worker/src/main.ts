// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/agent-worker/src/main.ts`.
import { createLogger } from '@countersign/platform';
import { startAgentWorker } from './bootstrap';

async function main(): Promise<void> {
  const worker = await startAgentWorker(process.env);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    createLogger('agent-worker').info({ signal }, 'shutting down: finishing in-flight tool calls');
    worker.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: Error) => {
  // Configuration errors name the bad variable; print them plainly and exit non-zero.
  process.stderr.write(`agent-worker failed to start: ${error.message}\n`);
  process.exit(1);
});

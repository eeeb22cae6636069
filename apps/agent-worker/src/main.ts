// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/agent-worker/src/main.ts`.
import { createLogger } from '@countersign/platform';
import { startAgentWorker } from './bootstrap';

async function main(): Promise<void> {
  const worker = await startAgentWorker(process.env);
  const logger = createLogger('agent-worker');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without finishing in-flight work');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight tool calls');
    // close() waits on Redis for every job it finishes; with Redis gone it would wait forever.
    setTimeout(() => {
      logger.error(
        { timeoutMs: worker.shutdownTimeoutMs },
        'shutdown did not finish in time (Redis unreachable, or a tool call still running): exiting; ' +
          'unfinished jobs are redelivered and interrupted calls asked about again',
      );
      process.exit(1);
    }, worker.shutdownTimeoutMs).unref();
    worker.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: Error) => {
  // Configuration errors name the bad variable; print them plainly and exit non-zero.
  process.stderr.write(`agent-worker failed to start: ${error.message}\n`);
  process.exit(1);
});

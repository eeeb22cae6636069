// Entry point: `node -r ts-node/register/transpile-only -r tsconfig-paths/register apps/agent-worker/src/main.ts`.
import { createLogger } from '@countersign/platform';
import { startAgentWorker, stopOnSignals } from './bootstrap';

startAgentWorker(process.env).then(
  (worker) => stopOnSignals(worker, createLogger('agent-worker')),
  (error: Error) => {
    // Configuration errors name the bad variable; print them plainly and exit non-zero.
    process.stderr.write(`agent-worker failed to start: ${error.message}\n`);
    process.exit(1);
  },
);

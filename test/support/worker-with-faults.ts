// The agent worker as its own process, as main.ts starts it, with the test faults its environment names
// (COUNTERSIGN_TEST_FAULTS) given as run hooks: spawned instead of main.ts by the tests that kill a worker at a
// chosen point (see workerEntryArgs).
import { createLogger } from '@countersign/platform';
import { startAgentWorker, stopOnSignals } from '../../apps/agent-worker/src/bootstrap';
import { runHooksFrom } from './test-faults';

startAgentWorker(process.env, { runHooks: runHooksFrom(process.env) }).then(
  (worker) => stopOnSignals(worker, createLogger('agent-worker')),
  (error: Error) => {
    process.stderr.write(`agent-worker failed to start: ${error.message}\n`);
    process.exit(1);
  },
);

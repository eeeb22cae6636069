// The handler of every job on the queues the worker consumes (start-up fails naming a missing one).
import { JobName } from '@countersign/contracts';
import type { JobCatalog } from '@countersign/platform';
import type { DecisionsProcessor, ManualStepsProcessor } from '../decisions/decision-processors';
import type { RunsProcessor } from '../runs/runs.processor';
import type { AgentWorkerQueue } from '../core/worker-queues';

export function agentWorkerJobs(
  runs: RunsProcessor,
  decisions: DecisionsProcessor,
  manualSteps: ManualStepsProcessor,
): JobCatalog<AgentWorkerQueue> {
  return { [JobName.StartRun]: runs, [JobName.Decision]: decisions, [JobName.ManualStepDone]: manualSteps };
}

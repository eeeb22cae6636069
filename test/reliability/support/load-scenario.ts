// The load scenario, shared by the one-Redis and the Redis Cluster specs: three worker processes,
// RELIABILITY_RUNS runs (default the full 10,000: about 35 s on 2 cores; set it lower for a quick check),
// decisions in random order, about one in ten delivered twice.
import { DecisionDesk } from './decision-desk';
import { Deployment, type RedisTarget } from './deployment';
import { ScenarioTally } from './scenario-tally';
import { checkRuns, mostlyApprove, planRuns } from './workload';

export const RUNS = Number(process.env.RELIABILITY_RUNS ?? 10_000);

/**
 * Locks long enough that a worker starved of CPU on a 2-core box is not taken for dead: with the e2e
 * default of 1 s, live workers' decision jobs were redelivered under load and their calls re-asked
 * as "interrupted" (see the report). Nothing is killed here, so nothing should ever be re-asked.
 */
export const LOAD_WORKER_ENV = {
  WORKER_CONCURRENCY: '32',
  LOCK_DURATION_MS: '15000',
  STALLED_INTERVAL_MS: '5000',
};

export async function loadScenario(name: string, target: RedisTarget, runsCount: number): Promise<void> {
  const deployment = new Deployment('load', target);
  const desk = new DecisionDesk(deployment, { plan: mostlyApprove, duplicateShare: 0.1 });
  try {
    const tally = new ScenarioTally(`${name} (3 workers, ${runsCount} runs)`);
    const { runs, jobs } = planRuns(runsCount, 'L');
    await deployment.addServices(runs.flatMap((r) => r.calls.map((c) => c.service)));
    const [first] = await deployment.startWorkers(3, LOAD_WORKER_ENV);
    desk.start();
    await deployment.startRuns(jobs);
    await deployment.waitForRunsToFinish(runs.map((r) => r.runId));

    await checkRuns(deployment, first, runs, { verdict: (c) => mostlyApprove(c) }, tally);
    const reasked = desk.requests.filter((r) => r.attempt > 0);
    reasked.forEach((r) => tally.wronglyExecuted(`${r.callId} re-asked (${r.reason}) though no worker died`));
    process.stdout.write(
      `[reliability]   ${name}: decisions published ${desk.published}, of which duplicates ${desk.duplicated}; ` +
        `re-asked ${reasked.length}\n`,
    );
    expect(desk.duplicated).toBeGreaterThan(0);
    tally.expectClean();
  } finally {
    await desk.close();
    await deployment.close();
  }
}

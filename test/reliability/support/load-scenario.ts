// The load scenario, shared by the one-Redis and the Redis Cluster specs: three worker processes,
// RELIABILITY_RUNS runs (default the full 10,000: about 35 s on 2 cores; set it lower for a quick check),
// decisions in random order, about one in ten delivered twice.
import { DecisionDesk } from './decision-desk';
import { Deployment, type DeploymentOptions, type RedisTarget } from './deployment';
import { ScenarioTally } from './scenario-tally';
import { checkRuns, mostlyApprove, planRuns } from './workload';

export const RUNS = Number(process.env.RELIABILITY_RUNS ?? 10_000);

/**
 * Short locks, so that under load on a 2-core box some live workers' jobs are redelivered and their runs
 * taken over mid-flight. Nothing is killed here, so nothing may ever be re-asked: a new owner that finds a
 * call executing waits for its live executor (fresh heartbeat) instead of calling it interrupted. (With a
 * 1 s lock and 1.5 s tools, decision jobs lapse by the dozen and still nothing is re-asked; 2 s keeps the
 * default run quick and its stalled counts far from MAX_STALLED_COUNT.)
 */
export const LOAD_WORKER_ENV = {
  WORKER_CONCURRENCY: '32',
  LOCK_DURATION_MS: '2000',
  STALLED_INTERVAL_MS: '1000',
};

export async function loadScenario(
  name: string,
  target: RedisTarget,
  runsCount: number,
  options: DeploymentOptions = {},
): Promise<void> {
  const deployment = new Deployment('load', target, options);
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

// The load scenario, shared by the one-Redis and the Redis Cluster specs: three worker processes,
// RELIABILITY_RUNS runs (default the full 10,000: about 35 s on 2 cores; set it lower for a quick check),
// decisions in random order, about one in ten delivered twice.
import { queueShardPrefixes } from '@countersign/platform';
import { auditKeys } from '@countersign/audit';
import { DecisionDesk } from './decision-desk';
import { Deployment, type DeploymentOptions, type RedisTarget } from './deployment';
import { type MasterShare, MasterShares } from './master-shares';
import type { OwnRedisCluster } from './redis-servers';
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

/** With `cluster`, also prints the share of commands each of its masters served, and flags one above half. */
export async function loadScenario(
  name: string,
  target: RedisTarget,
  runsCount: number,
  options: DeploymentOptions = {},
  cluster?: OwnRedisCluster,
): Promise<MasterShare[] | undefined> {
  const deployment = new Deployment('load', target, options);
  const desk = new DecisionDesk(deployment, { plan: mostlyApprove, duplicateShare: 0.1 });
  try {
    const tally = new ScenarioTally(`${name} (3 workers, ${runsCount} runs)`);
    const { runs, jobs } = planRuns(runsCount, 'L');
    await deployment.addServices(runs.flatMap((r) => r.calls.map((c) => c.service)));
    const shares = cluster && new MasterShares(cluster);
    await shares?.start();
    const [first] = await deployment.startWorkers(3, LOAD_WORKER_ENV);
    desk.start();
    await deployment.startRuns(jobs);
    await deployment.waitForRunsToFinish(runs.map((r) => r.runId));
    let served: MasterShare[] | undefined;
    if (cluster && shares) {
      // Which master holds each queue shard's and audit stream's hash tag, so a flagged master says what it carries.
      const where = async (key: string) => `127.0.0.1:${await cluster.portOf(key)}`;
      const holders: [string, string][] = [];
      for (const [shard, prefix] of queueShardPrefixes(
        deployment.prefixes.queuePrefix,
        deployment.queueShards,
      ).entries())
        holders.push([`queue shard ${shard}`, await where(`${prefix}:queues`)]);
      for (let shard = 0; shard < deployment.auditShards; shard++)
        holders.push([
          `audit stream ${shard}`,
          await where(auditKeys(deployment.prefixes.keyPrefix, shard, deployment.auditShards).stream),
        ]);
      served = await shares.stop();
      for (const line of MasterShares.lines(name, served, Object.fromEntries(holders)))
        process.stdout.write(`[reliability]   ${line}\n`);
    }

    await checkRuns(deployment, first, runs, { verdict: (c) => mostlyApprove(c) }, tally);
    const reasked = desk.requests.filter((r) => r.attempt > 0);
    reasked.forEach((r) => tally.wronglyExecuted(`${r.callId} re-asked (${r.reason}) though no worker died`));
    process.stdout.write(
      `[reliability]   ${name}: decisions published ${desk.published}, of which duplicates ${desk.duplicated}; ` +
        `re-asked ${reasked.length}\n`,
    );
    expect(desk.duplicated).toBeGreaterThan(0);
    tally.expectClean();
    return served;
  } finally {
    await desk.close();
    await deployment.close();
  }
}

// Past one Redis: a three-master Redis Cluster on loopback. The full round trip (worker processes, the
// approval service, decisions through its API) and the load scenario run against it. Redis refuses any
// script or transaction whose keys span slots (CROSSSLOT), so runs completing here prove every such key
// set shares a hash tag; the keys are then checked on the masters themselves.
import { Redis } from 'ioredis';
import { runKey } from '../../apps/agent-worker/src/runs/run-keys';
import type { RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { bearer } from '../support/principals';
import { openEventStream } from '../../bench/support/http';
import { decideAllThroughApi, startApprovalServiceFor } from './support/approval-desk';
import { Deployment } from './support/deployment';
import { OwnRedisCluster } from './support/redis-servers';
import { ScenarioTally } from './support/scenario-tally';
import { checkRuns, mostlyApprove, planRuns } from './support/workload';
import { LOAD_WORKER_ENV, loadScenario, RUNS } from './support/load-scenario';
import { MAX_MASTER_SHARE } from './support/master-shares';

/** The full 10,000 by default as well (about 50 s on 2 cores). */
const CLUSTER_RUNS = Number(process.env.RELIABILITY_CLUSTER_RUNS ?? RUNS);
const ROUND_TRIP_RUNS = 100;
/**
 * One queue shard, one audit stream and one approval-state shard per master (QUEUE_SHARDS, AUDIT_SHARDS,
 * APPROVAL_SHARDS): their load spreads as the runs' does.
 */
const SHARDS = { queueShards: 3, auditShards: 3, approvalShards: 3 };

describe('Redis Cluster (three masters)', () => {
  let cluster: OwnRedisCluster;
  beforeAll(async () => {
    cluster = await OwnRedisCluster.start(3);
  });
  afterAll(() => cluster?.stop());

  it('completes full approval round trips through the approval service API, each approved call once', async () => {
    const tally = new ScenarioTally(
      `round trip on Redis Cluster (3 workers, approval service, ${ROUND_TRIP_RUNS} runs)`,
    );
    const target = { url: 'redis://127.0.0.1:6379', clusterNodes: cluster.nodes, owned: true };
    const deployment = new Deployment('cluster-rt', target, SHARDS);
    let approvals: RunningApprovalService | undefined;
    try {
      const { runs, jobs } = planRuns(ROUND_TRIP_RUNS, 'C');
      await deployment.addServices(runs.flatMap((r) => r.calls.map((c) => c.service)));
      const workers = await deployment.startWorkers(3, LOAD_WORKER_ENV);
      approvals = await startApprovalServiceFor(deployment);
      // Live updates cross the cluster too: every request is announced (from the script that stores it).
      const announced = new Set<string>();
      const inbox = await openEventStream(`${approvals.url}/inbox/events`, bearer('bob'), (event, data) => {
        const change = JSON.parse(data) as { callId: string; status: string };
        if (event === 'change' && change.status === 'pending') announced.add(change.callId);
      });
      await deployment.startRuns(jobs);

      // Bob decides whatever is pending, in random order (a call still listed after his vote is voted on again).
      const runIds = runs.map((r) => r.runId);
      await decideAllThroughApi(approvals.url, deployment, runIds, mostlyApprove, tally);
      await checkRuns(deployment, workers[1], runs, { verdict: mostlyApprove }, tally);
      inbox.close();
      const calls = runs.flatMap((r) => r.calls.map((c) => c.callId));
      expect(calls.filter((id) => !announced.has(id))).toEqual([]);

      // Each run is one key (one slot); the runs are spread over all three masters.
      const masters = new Set<number>();
      for (const run of runs)
        masters.add(await cluster.portOf(runKey(deployment.prefixes.keyPrefix, run.runId)));
      expect(masters.size).toBe(3);
      // Every worker process both started runs and resumed runs: they share all runs, whatever master holds them.
      const counts = await Promise.all(
        workers.map(async (w) => {
          const text = await (await fetch(`${w.url}/metrics`, { headers: bearer('scraper') })).text();
          const total = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
          return {
            started: total('countersign_runs_started_total'),
            resumed: total('countersign_runs_resumed_total'),
          };
        }),
      );
      process.stdout.write(`[reliability]   cluster round trip per worker: ${JSON.stringify(counts)}\n`);
      expect(counts.every((c) => c.resumed > 0)).toBe(true);
      tally.expectClean();
    } finally {
      await approvals?.close();
      await deployment.close();
    }
  });

  it('keeps every multi-key group under one hash tag (checked on the masters)', async () => {
    // After the round trip, every key of the deployment exists on some master: group them by hash tag and
    // check that no tag is split across masters (what Redis would have refused as CROSSSLOT).
    const tagsByPort = new Map<string, Set<number>>();
    for (const server of cluster.servers) {
      const node = new Redis(server.port, '127.0.0.1');
      try {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'COUNT', 1000);
          cursor = next;
          for (const key of keys) {
            const tag = /\{([^}]+)\}/.exec(key)?.[1];
            if (!tag) continue;
            tagsByPort.set(tag, (tagsByPort.get(tag) ?? new Set()).add(server.port));
          }
        } while (cursor !== '0');
      } finally {
        node.disconnect();
      }
    }
    const split = [...tagsByPort].filter(([, ports]) => ports.size > 1).map(([tag]) => tag);
    expect(split).toEqual([]);
  });

  it('counts rate limits on the cluster, shared by the replicas of the approval service', async () => {
    const target = { url: 'redis://127.0.0.1:6379', clusterNodes: cluster.nodes, owned: true };
    const deployment = new Deployment('cluster-rate', target);
    const replicas: RunningApprovalService[] = [];
    try {
      for (let i = 0; i < 2; i++)
        replicas.push(await startApprovalServiceFor(deployment, { RATE_LIMIT_DECISIONS: '3/1m' }));
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${replicas[i % 2].url}/approvals/call-${i}/decisions`, {
          method: 'POST',
          headers: { ...bearer('bob'), 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'approve' }),
        });
        statuses.push(res.status);
      }
      // Unknown calls (404) count like any decision sent; the fourth, on either replica, is refused.
      expect(statuses).toEqual([404, 404, 404, 429, 429]);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await deployment.close();
    }
  });

  it(`completes ${CLUSTER_RUNS} load runs on 3 workers with every approved call executed exactly once, no master serving more than half`, async () => {
    const shares = await loadScenario(
      'load, Redis Cluster',
      { url: 'redis://127.0.0.1:6379', clusterNodes: cluster.nodes, owned: true },
      CLUSTER_RUNS,
      SHARDS,
      cluster,
    );
    // One queue shard and one audit stream per master: the load spreads (issue 18's rule).
    expect(shares).toHaveLength(3);
    for (const { master, share } of shares!)
      expect({ master, share: share <= MAX_MASTER_SHARE }).toEqual({ master, share: true });
  });
});

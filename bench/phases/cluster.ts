// The round trip on a local Redis Cluster (the reliability suite's redis-server processes, on free loopback ports):
// one approval service and one worker per cluster size, warmed up, then N round trips, with INFO commandstats read
// on every master before and after, so the table shows how the load spread over the masters. The services run with one
// queue and audit shard per master (README, "Queue shards"): without them the queues' single hash tag pins most of
// the load to one master.
import type { ClusterRoundTrip } from '../report';
import type { Child } from '../support/processes';
import { commandCalls, commandShares } from '../support/measure';
import { OwnRedisCluster } from '../../test/reliability/support/redis-servers';
import { roundTrips, type RoundTripOptions } from './round-trip';

export interface ClusterOptions {
  masters: number[];
  runs: number;
  warmup: number;
  /**
   * Starts the approval service and one worker on the cluster (REDIS_CLUSTER_NODES), with as many queue and audit
   * shards as masters (so each master can carry a share), and waits until both are healthy.
   */
  startServices: (clusterNodes: string, shards: number) => Promise<{ approval: Child; worker: Child }>;
  /** Everything of a round-trip phase but what this phase decides (services, runs, label, Redis). */
  roundTrip: Omit<RoundTripOptions, 'label' | 'runs' | 'workers' | 'approvalUrl' | 'redis' | 'quiet'>;
  log: (message: string) => void;
  /** Called with each cluster once started, so an interrupted bench can stop it. */
  onCluster?: (cluster: OwnRedisCluster) => void;
}

export async function clusterRoundTrips(o: ClusterOptions): Promise<ClusterRoundTrip[]> {
  const results: ClusterRoundTrip[] = [];
  for (const masters of o.masters) {
    o.log(
      `starting a local Redis Cluster of ${masters} master(s), an approval service and a worker on it ` +
        `(QUEUE_SHARDS=${masters}, AUDIT_SHARDS=${masters}, APPROVAL_SHARDS=${masters})`,
    );
    const cluster = await OwnRedisCluster.start(masters);
    o.onCluster?.(cluster);
    const nodes = cluster.nodeClients();
    let services: { approval: Child; worker: Child } | undefined;
    try {
      services = await o.startServices(cluster.nodes, masters);
      const phase = (label: string, runs: number, quiet: boolean) =>
        roundTrips({
          ...o.roundTrip,
          label,
          runs,
          quiet,
          workers: [services!.worker],
          approvalUrl: services!.approval.url!,
          redis: nodes,
        });
      await phase('warm-up', o.warmup, true);
      const before = await Promise.all(nodes.map((n) => commandCalls(n)));
      const result = await phase(`round trips, cluster of ${masters}`, o.runs, false);
      const shares = commandShares(before, await Promise.all(nodes.map((n) => commandCalls(n))));
      results.push({
        masters,
        result,
        commandShares: cluster.servers.map((s, i) => ({ port: s.port, share: shares[i] })),
      });
    } finally {
      await Promise.all([services?.approval.stop(), services?.worker.stop()]);
      for (const node of nodes) node.disconnect();
      await cluster.stop();
    }
  }
  return results;
}

// How the commands of a scenario spread over the masters of a Redis Cluster: INFO commandstats on every master
// before and after, each master's share of the total. Printed, with a master above half flagged; the cluster spec
// asserts none is when the queues, the audit and the approval state are sharded one shard per master.
import type { Redis } from 'ioredis';
import { commandCalls, commandShares } from '../../../bench/support/measure';
import type { OwnRedisCluster } from './redis-servers';

/** Above this share one master carries the load the cluster was meant to spread (the issue's rule). */
export const MAX_MASTER_SHARE = 0.5;

export interface MasterShare {
  master: string;
  share: number;
}

export class MasterShares {
  private readonly nodes: Redis[];
  private before: Map<string, number>[] = [];

  constructor(private readonly cluster: OwnRedisCluster) {
    this.nodes = cluster.nodeClients();
  }

  async start(): Promise<void> {
    this.before = await Promise.all(this.nodes.map((n) => commandCalls(n)));
  }

  async stop(): Promise<MasterShare[]> {
    const after = await Promise.all(this.nodes.map((n) => commandCalls(n)));
    for (const node of this.nodes) node.disconnect();
    return commandShares(this.before, after).map((share, i) => ({
      master: `127.0.0.1:${this.cluster.servers[i].port}`,
      share,
    }));
  }

  /** The lines for the report: every master's share, and a "flagged" line per master above MAX_MASTER_SHARE. */
  static lines(name: string, shares: MasterShare[], holders: Record<string, string>): string[] {
    const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
    const lines = [
      `${name}: share of commands per master: ${shares.map((s) => `${s.master} ${percent(s.share)}`).join(', ')}`,
    ];
    for (const s of shares.filter((m) => m.share > MAX_MASTER_SHARE)) {
      const holds = Object.entries(holders)
        .filter(([, master]) => master === s.master)
        .map(([what]) => what);
      lines.push(
        `flagged: master ${s.master} served ${percent(s.share)} (> ${MAX_MASTER_SHARE * 100}%)` +
          (holds.length ? `; it holds ${holds.join(', ')}` : ''),
      );
    }
    return lines;
  }
}

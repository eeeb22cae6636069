import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  url: string;
  /** `host:port,host:port` of a Redis Cluster; when set, `url` is only used for its credentials. */
  clusterNodes?: string;
}

/**
 * One connection. `blocking: true` is for BullMQ workers, which need `maxRetriesPerRequest: null`
 * so a blocking command survives a reconnect.
 */
export function createRedis(
  target: RedisTarget,
  options: { blocking?: boolean; name?: string } = {},
): RedisClient {
  const common: RedisOptions = {
    maxRetriesPerRequest: options.blocking ? null : 20,
    enableReadyCheck: true,
    connectionName: options.name,
    // Commands issued in the same tick go out in one write (fewer syscalls for the service and for Redis).
    // Not on BullMQ's connections: BullMQ sequences its own calls and blocks on them.
    enableAutoPipelining: !options.blocking,
  };
  if (target.clusterNodes) {
    const nodes = target.clusterNodes.split(',').map((hostPort) => {
      const [host, port] = hostPort.trim().split(':');
      return { host, port: Number(port) };
    });
    return new Cluster(nodes, { redisOptions: common, enableReadyCheck: true });
  }
  return new Redis(target.url, common);
}

import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { type Logger, throttledErrorLog } from './logger';

export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  url: string;
  /** `host:port,host:port` of a Redis Cluster; when set, `url` is only used for its credentials. */
  clusterNodes?: string;
}

/**
 * One connection. `blocking: true` is for BullMQ workers, which need `maxRetriesPerRequest: null`
 * so a blocking command survives a reconnect. With a `logger`, connection errors (every reconnect attempt
 * while Redis is down) are logged, throttled; without a listener ioredis prints each one to stderr.
 */
export function createRedis(
  target: RedisTarget,
  options: { blocking?: boolean; name?: string; logger?: Logger } = {},
): RedisClient {
  const client = connect(target, options);
  if (options.logger) {
    const { logger, name } = options;
    const report = throttledErrorLog(logger, 'redis connection error');
    let failing = false;
    client.on('error', (error: Error) => {
      failing = true;
      report({ connection: name }, error);
    });
    client.on('ready', () => {
      if (failing) logger.info({ connection: name }, 'redis connection restored');
      failing = false;
    });
  }
  return client;
}

function connect(target: RedisTarget, options: { blocking?: boolean; name?: string }): RedisClient {
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

/**
 * Whether Redis answers now: false at once while the client is not connected (it would otherwise queue the
 * PING behind its reconnect attempts), and false when a PING takes longer than `timeoutMs`. For health checks.
 */
export async function redisAnswers(client: RedisClient, timeoutMs = 1_000): Promise<boolean> {
  if (client.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = client.ping().then(
    (pong) => pong === 'PONG',
    () => false,
  );
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

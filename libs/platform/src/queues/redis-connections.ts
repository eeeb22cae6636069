// The Redis connections of one app instance. The queue module closes them last, after its workers and queues.
import type { Logger } from '../logger';
import { createRedis, type RedisClient, type RedisTarget } from '../redis';

export class RedisConnections {
  /** Plain commands and Lua scripts: run and approval state, audit, publishing events. Auto-pipelined. */
  readonly commands: RedisClient;
  /** Pub/sub subscriber (a subscribed connection can run nothing else). */
  readonly subscriber: RedisClient;
  /**
   * BullMQ's producers (`Queue.add`), auto-pipelined. Not `commands`: BullMQ defines its 64 scripts on the
   * connection it uses, and ioredis copies every defined script into each auto-pipeline batch it builds.
   */
  readonly producers: RedisClient;
  /**
   * Shared by the BullMQ workers, which duplicate it for their blocking reads: `maxRetriesPerRequest: null`, so
   * a blocking command survives a reconnect, and not auto-pipelined (that measured slower on workers).
   */
  readonly workers: RedisClient;

  constructor(target: RedisTarget, service: string, logger: Logger) {
    this.commands = createRedis(target, { name: service, logger });
    this.subscriber = createRedis(target, { name: `${service}-events`, logger });
    this.producers = createRedis(target, { name: `${service}-producers`, logger });
    this.workers = createRedis(target, { blocking: true, name: `${service}-queues`, logger });
  }

  /** Quits every connection still open (waiting for replies still due); one that cannot quit is dropped. */
  async close(): Promise<void> {
    const open = [this.commands, this.subscriber, this.producers, this.workers].filter(
      (c) => c.status !== 'end',
    );
    await Promise.allSettled(open.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

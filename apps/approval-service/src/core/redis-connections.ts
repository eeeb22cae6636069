// The service's Redis connections: commands, BullMQ producers, BullMQ workers (blocking-safe) and pub/sub.
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createRedis, type Logger, type RedisClient } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from './tokens';

@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  /** Plain commands and Lua scripts. */
  readonly commands: RedisClient;
  /**
   * BullMQ's producers (`Queue.add`), auto-pipelined. Not `commands`: BullMQ defines its 64 scripts on the
   * connection it uses, and ioredis copies every defined script into each auto-pipeline batch it builds.
   */
  readonly producers: RedisClient;
  /** Shared by the BullMQ workers (maxRetriesPerRequest: null); they duplicate it for blocking calls. */
  readonly bull: RedisClient;
  /** Subscriber of the live-update channel. */
  readonly subscriber: RedisClient;

  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) { env }: ApprovalServiceConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    const target = { url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES };
    this.commands = createRedis(target, { name: 'approval-service', logger });
    this.producers = createRedis(target, { name: 'approval-service-producers', logger });
    this.bull = createRedis(target, { blocking: true, name: 'approval-service-bullmq', logger });
    this.subscriber = createRedis(target, { name: 'approval-service-sub', logger });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [this.commands, this.producers, this.bull, this.subscriber].map((c) =>
        c.quit().catch(() => c.disconnect()),
      ),
    );
  }
}

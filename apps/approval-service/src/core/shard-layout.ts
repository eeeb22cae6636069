// The approval state's shard count, kept under its home tag: a request is looked for in the shard of its request ID
// under the count configured now, so requests and timers stored under another count would be lost from view (never
// expired, never listed, their links answering 404). At start, a service whose APPROVAL_SHARDS differs from the stored
// count refuses to start while the state of the old count still holds an open request or a due timer; once nothing
// is open, it records the new count and starts.
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { RedisConnections, type Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { APPROVAL_KEYS, LOGGER } from './tokens';
import { approvalKeys, type ApprovalKeys } from './approval-keys';

/** The count a deployment that never recorded one ran with (every version before shards). */
const UNRECORDED = 1;

export class ShardCountChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

@Injectable()
export class ShardLayout implements OnModuleInit {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    @Inject(APPROVAL_KEYS) private readonly keys: ApprovalKeys,
    private readonly redis: RedisConnections,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    const { KEY_PREFIX: prefix, APPROVAL_SHARDS: shards } = this.config.env;
    const redis = this.redis.commands;
    const key = this.keys.shardCount;
    const stored = await redis.get(key);
    const previous = stored === null ? UNRECORDED : Number(stored);
    if (previous !== shards) {
      const old = approvalKeys(prefix, previous).shards;
      const counts = await Promise.all(
        old.flatMap((shard) => [shard.pending, shard.notices, shard.timers].map((set) => redis.zcard(set))),
      );
      const open = counts.reduce((sum, n) => sum + n, 0);
      if (open > 0)
        throw new ShardCountChangedError(
          `APPROVAL_SHARDS is ${shards}, but the approval state was stored in ${previous} shard(s) and still holds ` +
            `${open} open request(s) or timer(s) there: start with APPROVAL_SHARDS=${previous} until they are settled`,
        );
      if (stored !== null)
        this.logger.warn(
          { from: previous, to: shards },
          'APPROVAL_SHARDS changed with nothing open; settled requests of the old shards are no longer listed',
        );
    }
    if (stored === null || previous !== shards) await redis.set(key, String(shards));
  }
}

// The run readers set (see runReadersKey in @countersign/contracts): written by the approval service, read by the worker.
import { runReadersKey } from '@countersign/contracts';
import type { RedisClient } from '@countersign/platform';

export class RunReaders {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  /** Idempotent (a redelivered request adds the same members); the set lives as long as settled requests stay readable. */
  async add(runId: string, principalIds: readonly string[], ttlMs: number): Promise<void> {
    if (principalIds.length === 0) return;
    const key = runReadersKey(this.keyPrefix, runId);
    await this.redis
      .multi()
      .sadd(key, ...principalIds)
      .pexpire(key, ttlMs)
      .exec();
  }

  async includes(runId: string, principalId: string): Promise<boolean> {
    return (await this.redis.sismember(runReadersKey(this.keyPrefix, runId), principalId)) === 1;
  }
}

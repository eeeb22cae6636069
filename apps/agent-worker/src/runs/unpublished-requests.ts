// The index of parked calls whose approval request is not confirmed on the queue yet (see unpublishedRequestsKey):
// noted before a run parks, dropped once the request is out, read by the request sweep for what stays behind.
import type { RedisClient } from '@countersign/platform';
import { unpublishedMember, unpublishedRequestsKey, type UnpublishedRequest } from './run-keys';

export class UnpublishedRequests {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = unpublishedRequestsKey(keyPrefix);
  }

  /**
   * Notes that these calls' requests are not on the queue yet, before the run parks on them: if the parking job dies
   * (or its publish fails) before markPublished, the request sweep finds them here (see RequestSweep). A plain ZADD of
   * its own, not part of the park script: the index is one key for every run, and a script may touch one slot only.
   */
  async markUnpublished(requests: UnpublishedRequest[], now = Date.now()): Promise<void> {
    if (requests.length === 0) return;
    const entries = requests.flatMap((request) => [now, unpublishedMember(request)]);
    await this.redis.zadd(this.key, 'NX', ...entries);
  }

  /** The requests are on the queue: the sweep has nothing left to do for them (nothing stays at rest). */
  async markPublished(requests: UnpublishedRequest[]): Promise<void> {
    if (requests.length === 0) return;
    await this.redis.zrem(this.key, ...requests.map(unpublishedMember));
  }

  /** Up to `limit` unpublished requests noted before `before` (ms), oldest first, skipping the first `offset`. */
  async unpublishedBefore(before: number, limit: number, offset = 0): Promise<string[]> {
    return this.redis.zrangebyscore(this.key, '-inf', before, 'LIMIT', offset, limit);
  }

  /** How many requests were noted before `before` (ms) and are still not confirmed on the queue. */
  countUnpublishedBefore(before: number): Promise<number> {
    return this.redis.zcount(this.key, '-inf', before);
  }

  /** Drops index entries by their member text (ones the sweep found stale or unreadable). */
  async dropUnpublished(members: string[]): Promise<void> {
    if (members.length === 0) return;
    await this.redis.zrem(this.key, ...members);
  }
}

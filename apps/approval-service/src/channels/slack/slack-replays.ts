// Slack request signatures seen within the replay window: a request whose signature was seen already is a replay.
// Part of checking who is knocking at the Slack endpoint, under the approval state's home tag.
import type { RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../../core/approval-keys';

export class SlackReplays {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
  ) {}

  /** Remembers a Slack request signature for `ttlSeconds`; false when it was seen already (a replay). */
  async firstSeen(signature: string, ttlSeconds: number): Promise<boolean> {
    const reply = await this.redis.set(this.keys.seenSlackSignature(signature), '1', 'EX', ttlSeconds, 'NX');
    return reply === 'OK';
  }
}

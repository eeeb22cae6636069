// What settling leaves in Redis besides the request's own move (its vote's, expiry's or rule's script): the decision
// marked published (its timers go), and the requester's trust in the tool counted.
import { LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalRequest } from '@countersign/contracts';
import { trustField, type ApprovalKeys } from '../core/approval-keys';
import type { Outcome } from '../requests/approval-types';

const SCRIPTS = {
  markPublished: LuaScript.load(__dirname, 'mark-published-2.lua'),
  countTrust: LuaScript.load(__dirname, 'count-trust-1.lua'),
};

export class DecisionStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
  ) {}

  /** The decision is on the queue: nothing is left to check, so the attempt's timers go too. */
  async markPublished(requestId: string, attempt: number): Promise<void> {
    const shard = this.keys.shardOf(requestId);
    await SCRIPTS.markPublished.run(
      this.redis,
      [shard.request(requestId), shard.timers],
      [requestId, attempt],
    );
  }

  /**
   * Counts a request people decided into its requester's trust in the tool (see count-trust-1.lua): an approve of
   * the arguments as asked adds one, a deny or an approve of edited arguments starts over. Under the home tag (every
   * shard's requests count), so after the vote's script and apart from it: the caller runs it beside publishing the
   * decision, and a process that dies in between loses one count of an advisory figure, never a decision.
   */
  async countTrust(request: ApprovalRequest, outcome: Outcome): Promise<void> {
    await SCRIPTS.countTrust.run(
      this.redis,
      [this.keys.trust],
      [
        trustField(request.requester, request.toolName),
        outcome.decision === 'approve' && !outcome.args ? 'approve' : 'reset',
        Date.parse(outcome.decidedAt),
      ],
    );
  }
}

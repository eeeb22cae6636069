// Redis keys of approval state. A request's own state (its hash, the status lists, the due timers, its call ID's set,
// its spent link tokens) lives in one shard: one hash tag, because the request scripts touch several of those keys at
// once (Redis Cluster). With APPROVAL_SHARDS = 1 (the default) there is one shard, `{<KEY_PREFIX>:approvals}`;
// with n > 1 each shard has its own tag, placed like the queue shards (see queue-shards.ts), and a request lives in
// the shard its request ID hashes to, so everything that names a request finds its shard without a lookup.
// What is not one request's (trust counters, standing rules, digest windows, sign-in codes, …) stays under the
// home tag `{<KEY_PREFIX>:approvals}`; the standing rules are also copied into every shard, where the script that
// decides a request by a rule checks them (see StandingRuleStore).
import { queueShardOf, shardedHashTag } from '@countersign/platform';
import { DEFAULT_APPROVAL_SHARDS, MAX_APPROVAL_SHARDS } from '../config/approval-service.config';

/** One shard of the approval state (all keys under one hash tag). */
export interface ApprovalShard {
  /** Its place in ApprovalKeys.shards. */
  readonly index: number;
  readonly tag: string;
  /** A request's hash, by request ID: two runs that use one call ID, or a later turn that reuses one, never share it. */
  request(requestId: string): string;
  /**
   * The request IDs stored for one call ID (a set), so `/approvals/<callId>` finds its requests when the call ID names
   * some (see ApprovalReadModel.resolve); one set per shard. Expires after the last of them could still be read.
   */
  callRequests(callId: string): string;
  /** The status lists (zsets of request IDs; pending and notices scored by creation, decided and expired by settling). */
  readonly pending: string;
  readonly notices: string;
  readonly decided: string;
  readonly expired: string;
  /** Due timers (zset): member `<kind>|<requestId>|<attempt>`, score = when it is due (ms). See timers/timer-member.ts. */
  readonly timers: string;
  /** Marks a spent email-link token (by hash): spent in the vote's own script, so in the request's shard. */
  usedToken(tokenHash: string): string;
  /** This shard's copy of the standing rules (the home hash when there is one shard). */
  readonly standingRules: string;
}

export interface ApprovalKeys {
  /** Every shard, shard 0 first. */
  readonly shards: readonly ApprovalShard[];
  /** The shard of a request: the first 4 bytes of its request ID's SHA-256, modulo the shard count. */
  shardOf(requestId: string): ApprovalShard;
  /** A request's hash, in its shard. */
  request(requestId: string): string;
  /** Trust counters (hash `<requester>|<tool>` → consecutive approvals), read at create, written when a vote decides. */
  readonly trust: string;
  /**
   * External approvals: the approval ID (their request ID) of one (client, requester, run, call ID, fingerprint), by the
   * SHA-256 of those five (see external-call-store.ts), so a client submitting the same call again finds its approval.
   */
  externalIndex(digest: string): string;
  /** Remembers a Slack request signature for the replay window. */
  seenSlackSignature(signature: string): string;
  /** One requester's notification window (NOTIFY_DIGEST_WINDOW): counts, targets and digests (DigestStore). */
  digestWindow(requester: string, windowStart: number): string;
  /** A one-time inbox sign-in code (by hash) → the principal it signs in. */
  signInCode(codeHash: string): string;
  /** The shard count the state was stored with (see ShardLayout). */
  readonly shardCount: string;
  /** Standing rules (hash: rule ID → rule JSON), the list people see and change; each shard has a copy. */
  readonly standingRules: string;
  /** Pub/sub channel of changes, so every replica's inbox sees every change. */
  readonly changes: string;
}

export function approvalKeys(keyPrefix: string, shards = DEFAULT_APPROVAL_SHARDS): ApprovalKeys {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_APPROVAL_SHARDS)
    throw new RangeError(
      `approval shards must be an integer from 1 to ${MAX_APPROVAL_SHARDS}, got ${shards}`,
    );
  const home = `{${keyPrefix}:approvals}`;
  const all = Array.from({ length: shards }, (_, index) =>
    approvalShard(shardedHashTag(home, index, shards), index),
  );
  const shardOf = (requestId: string) => all[queueShardOf(requestId, shards)];
  return {
    shards: all,
    shardOf,
    request: (requestId) => shardOf(requestId).request(requestId),
    trust: `${home}:trust`,
    externalIndex: (digest) => `${home}:external:${digest}`,
    seenSlackSignature: (signature) => `${home}:slack-seen:${signature}`,
    digestWindow: (requester, windowStart) => `${home}:digest:${requester}:${windowStart}`,
    signInCode: (codeHash) => `${home}:sign-in:${codeHash}`,
    shardCount: `${home}:shard-count`,
    standingRules: `${home}:standing-rules`,
    changes: `${keyPrefix}:approvals:changes`,
  };
}

function approvalShard(tag: string, index: number): ApprovalShard {
  return {
    index,
    tag,
    request: (requestId) => `${tag}:request:${requestId}`,
    callRequests: (callId) => `${tag}:call-requests:${callId}`,
    pending: `${tag}:pending`,
    notices: `${tag}:notices`,
    decided: `${tag}:decided`,
    expired: `${tag}:expired`,
    timers: `${tag}:timers`,
    usedToken: (tokenHash) => `${tag}:used:${tokenHash}`,
    standingRules: `${tag}:standing-rules`,
  };
}

/** The trust counter of one tool for one requester (IDs and tool names never contain '|'). */
export const trustField = (requester: string, toolName: string) => `${requester}|${toolName}`;

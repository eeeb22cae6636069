// Queue shards: on a Redis Cluster one BullMQ queue is one hash tag, so one master. With QUEUE_SHARDS = n every
// queue exists n times, each copy under its own hash tag, and a run's jobs (its start, its requests, their
// decisions) all go to the copy its run ID hashes to. Both apps work on every copy. The audit log places its streams
// (AUDIT_SHARDS) with the same functions.
import { createHash } from 'node:crypto';
import keySlot from 'cluster-key-slot';

/** One shard: every queue under the one prefix, as before sharding. */
export const DEFAULT_QUEUE_SHARDS = 1;
/** Each shard is one worker (and one blocking connection) per consumed queue in every process: keep it small. */
export const MAX_QUEUE_SHARDS = 16;
/** Redis Cluster's slot count. */
const CLUSTER_SLOTS = 16_384;

/**
 * The shard of a key (a run ID; an external approval's own ID; a requester), in [0, shards). Stable across
 * processes and releases: the first 4 bytes of the key's SHA-256, modulo the shard count.
 */
export function queueShardOf(key: string, shards: number): number {
  if (shards <= 1) return 0;
  return createHash('sha256').update(key, 'utf8').digest().readUInt32BE(0) % shards;
}

/**
 * The BullMQ prefix of shard `shard` of `shards`. One shard keeps the configured prefix (a deployment without
 * sharding is unchanged). Otherwise each shard's tag is the configured one with a suffix inside the braces
 * (`{countersign}` → `{countersign:s1}`, or `{countersign:s1.4}`): the first suffix whose slot lies in the shard's
 * n-th of the slot range. `redis-cli --cluster create` gives n masters n equal runs of slots, so n shards on n
 * masters land one per master (a plain hash would put two of three on one master two times in three).
 * A prefix without a hash tag (single Redis only) gets `:s<shard>` appended.
 */
export function queueShardPrefix(prefix: string, shard: number, shards: number): string {
  return shardedHashTag(prefix, shard, shards);
}

/**
 * Shard `shard` of `shards` of anything named under one hash tag (the queues' prefix, the audit's tag): the same
 * placement as queueShardPrefix.
 */
export function shardedHashTag(prefix: string, shard: number, shards: number): string {
  if (shards <= 1) return prefix;
  const open = prefix.indexOf('{');
  const close = open === -1 ? -1 : prefix.indexOf('}', open + 1);
  // No tag (or `{}`, which Redis hashes as the whole key): nothing to place on a slot.
  if (close <= open + 1) return `${prefix}:s${shard}`;
  const withSuffix = (suffix: string) => `${prefix.slice(0, close)}:${suffix}${prefix.slice(close)}`;
  const from = Math.floor((shard * CLUSTER_SLOTS) / shards);
  const to = Math.floor(((shard + 1) * CLUSTER_SLOTS) / shards);
  // About `shards` tries on average; 100,000 misses in a row would need a broken hash.
  for (let attempt = 0; attempt < 100_000; attempt++) {
    const candidate = withSuffix(attempt === 0 ? `s${shard}` : `s${shard}.${attempt}`);
    const slot = keySlot(candidate);
    if (slot >= from && slot < to) return candidate;
  }
  throw new Error(`no hash tag for shard ${shard} of ${shards} under ${prefix}`);
}

/** Every shard's prefix, shard 0 first. */
export function queueShardPrefixes(prefix: string, shards: number): string[] {
  return Array.from({ length: Math.max(1, shards) }, (_, shard) => queueShardPrefix(prefix, shard, shards));
}

// Checks the whole audit log: every entry's HMAC link, the retention checkpoint, and that every chain ends at its
// head. Reads the stream in chunks, so memory stays bounded by the chunk and the number of chains.
import type { AuditVerification } from '@countersign/contracts';
import { AuditChainWalk } from './audit-chain-walk';
import { readCheckpoint, type AuditCheckpoint } from './audit-checkpoint';
import { storedEntry, type AuditKeys } from './audit-entry';
import type { AuditKeyring } from './audit-keyring';
import type { RedisClient } from '@countersign/platform';
import { compareStreamIds } from './stream-id';

/** Stream entries read per XRANGE. */
const CHUNK = 1_000;
/** A walk that a trim overtook (the checkpoint moved meanwhile) is started again, this many times at most. */
const ATTEMPTS = 3;

type BrokenAt = NonNullable<AuditVerification['brokenAt']>;

interface Snapshot {
  heads: Record<string, string>;
  checkpoint: string | null;
  /** The newest entry when the walk began: entries appended later are not walked (their heads were not read). */
  lastId?: string;
}

export async function verifyAuditLog(
  redis: RedisClient,
  keys: AuditKeys,
  keyring: AuditKeyring,
): Promise<AuditVerification> {
  for (let attempt = 1; ; attempt++) {
    const snapshot = await takeSnapshot(redis, keys);
    const check = await walk(redis, keys, keyring, snapshot);
    if (check.intact || attempt >= ATTEMPTS) return check;
    // Retention trimmed entries this walk had not reached yet: that is not a break. Walk again.
    if ((await redis.get(keys.checkpoint)) === snapshot.checkpoint) return check;
  }
}

/** The heads, the checkpoint and the newest entry as of one moment (a transaction), so an append in between is no break. */
async function takeSnapshot(redis: RedisClient, keys: AuditKeys): Promise<Snapshot> {
  const replies = await redis
    .multi()
    .hgetall(keys.heads)
    .get(keys.checkpoint)
    .xrevrange(keys.stream, '+', '-', 'COUNT', 1)
    .exec();
  if (!replies) throw new Error('audit snapshot transaction was aborted');
  const error = replies.find(([e]) => e)?.[0];
  if (error) throw error;
  const [[, heads], [, checkpoint], [, newest]] = replies as [
    [null, Record<string, string>],
    [null, string | null],
    [null, [string, string[]][]],
  ];
  return { heads, checkpoint, lastId: newest[0]?.[0] };
}

async function walk(
  redis: RedisClient,
  keys: AuditKeys,
  keyring: AuditKeyring,
  snapshot: Snapshot,
): Promise<AuditVerification> {
  let brokenAt: BrokenAt | undefined;
  let checkpoint: AuditCheckpoint | undefined;
  if (snapshot.checkpoint !== null) {
    const read = readCheckpoint(snapshot.checkpoint, keyring);
    if (read.ok) checkpoint = read.checkpoint;
    else brokenAt = { id: '-', reason: read.reason };
  }
  const chains = new AuditChainWalk(keyring, checkpoint?.chains);
  let entries = 0;
  for (let from = '-'; snapshot.lastId !== undefined;) {
    const rows = await redis.xrange(keys.stream, from, snapshot.lastId, 'COUNT', CHUNK);
    for (const [id, fields] of rows) {
      entries++;
      if (checkpoint && compareStreamIds(id, checkpoint.upTo) <= 0)
        brokenAt ??= {
          id,
          reason: `entry is not newer than the retention checkpoint (everything up to ${checkpoint.upTo} was trimmed): it was put back`,
        };
      const reason = chains.step(storedEntry(id, fields));
      if (reason) brokenAt ??= { id, reason };
    }
    if (rows.length < CHUNK) break;
    from = `(${rows[rows.length - 1][0]}`;
  }
  brokenAt ??= endsAtHeads(chains, snapshot.heads, checkpoint);
  const chainIds = new Set([
    ...chains.last.keys(),
    ...Object.keys(snapshot.heads),
    ...Object.keys(checkpoint?.chains ?? {}),
  ]);
  const keyIds = new Set([...chains.keyIds, ...(checkpoint ? [checkpoint.key] : [])]);
  return {
    intact: !brokenAt,
    entries,
    chains: chainIds.size,
    keys: [...keyIds].sort(),
    ...(checkpoint
      ? { checkpoint: { upTo: checkpoint.upTo, at: checkpoint.at, trimmed: checkpoint.trimmed } }
      : {}),
    ...(brokenAt ? { brokenAt } : {}),
  };
}

/**
 * Every chain ends at its head: one that does not lost its newest entries; a head without entries lost all of them.
 * A chain the checkpoint says goes on must still have its head, at the checkpoint's link if no entry is left after it.
 */
function endsAtHeads(
  chains: AuditChainWalk,
  heads: Record<string, string>,
  checkpoint: AuditCheckpoint | undefined,
): BrokenAt | undefined {
  for (const [chain, { id, hash }] of chains.last) {
    const head = heads[chain];
    if (head === undefined) return { id, reason: `chain ${chain} has no head (its head was deleted)` };
    if (head !== hash) return { id, reason: `newest entries of chain ${chain} are missing` };
  }
  for (const [chain, hash] of Object.entries(checkpoint?.chains ?? {})) {
    if (chains.last.has(chain)) continue;
    const head = heads[chain];
    if (head === undefined)
      return {
        id: '-',
        reason: `chain ${chain} goes on after the retention checkpoint, but has neither entries nor a head (both were deleted)`,
      };
    if (head !== hash)
      return {
        id: '-',
        reason: `newest entries of chain ${chain} are missing (none is left after the checkpoint)`,
      };
  }
  const empty = Object.keys(heads).find((chain) => !chains.last.has(chain) && !checkpoint?.chains[chain]);
  return empty ? { id: '-', reason: `chain ${empty} has no entries (all of them are missing)` } : undefined;
}

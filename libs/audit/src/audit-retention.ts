// Retention: entries older than the retention leave the audit stream, and a signed checkpoint says what left, so the
// chains that go on still verify. Only what verifies is trimmed: evidence of tampering stays until someone looks.
import { encodeScriptArgs, LuaScript } from '@countersign/platform';
import { AuditChainWalk } from './audit-chain-walk';
import { readCheckpoint, signCheckpoint, type AuditCheckpoint } from './audit-checkpoint';
import { storedEntry, type AuditKeys } from './audit-entry';
import type { AuditKeyring } from './audit-keyring';
import type { RedisClient } from '@countersign/platform';
import { nextStreamId } from './stream-id';

const TRIM_SCRIPT = LuaScript.load(__dirname, 'audit-trim-3.lua');
/** Entries verified and trimmed per script call. */
const TRIM_CHUNK = 2_000;
/** Script calls of one trim; what is left waits for the next one. */
const MAX_CHUNKS = 50;

enum TrimErrorCode {
  CheckpointMoved = -1,
  HeadMoved = -2,
}

export type TrimResult =
  /** `more`: entries past the retention are left for the next trim (this one did its share). */
  | { status: 'trimmed'; trimmed: number; more: boolean }
  /** Another replica trimmed, or a chain about to be removed was extended, meanwhile: try again later. */
  | { status: 'busy'; trimmed: number }
  /** The checkpoint, or an entry due for trimming, does not verify: nothing from there on is trimmed. */
  | { status: 'refused'; trimmed: number; at: string; reason: string };

/** Trims entries written before `cutoffMs` (Redis time, as in their stream IDs). */
export async function trimAuditLog(
  redis: RedisClient,
  keys: AuditKeys,
  keyring: AuditKeyring,
  cutoffMs: number,
  now: Date,
): Promise<TrimResult> {
  let trimmed = 0;
  for (let chunk = 0; chunk < MAX_CHUNKS; chunk++) {
    const stored = await redis.get(keys.checkpoint);
    let checkpoint: AuditCheckpoint | undefined;
    if (stored !== null) {
      const read = readCheckpoint(stored, keyring);
      if (!read.ok) return { status: 'refused', trimmed, at: '-', reason: read.reason };
      checkpoint = read.checkpoint;
    }
    const from = checkpoint ? `(${checkpoint.upTo}` : '-';
    const rows = await redis.xrange(keys.stream, from, `(${cutoffMs}-0`, 'COUNT', TRIM_CHUNK);
    const { verified, links, broken } = verifyPrefix(rows, keyring, checkpoint);
    if (verified === 0) {
      if (broken) return { status: 'refused', trimmed, ...broken };
      // Nothing to trim; a checkpoint signed with a previous key is signed again, so that key can be retired.
      if (checkpoint && checkpoint.key !== keyring.current.id) {
        const reply = await apply(redis, keys, keyring, stored!, checkpoint, checkpoint.upTo, {}, now);
        if (reply < 0) return { status: 'busy', trimmed };
      }
      return { status: 'trimmed', trimmed, more: false };
    }
    const upTo = rows[verified - 1][0];
    const reply = await apply(redis, keys, keyring, stored ?? '', checkpoint, upTo, links, now, verified);
    if (reply < 0) return { status: 'busy', trimmed };
    trimmed += reply;
    if (broken) return { status: 'refused', trimmed, ...broken };
    if (rows.length < TRIM_CHUNK) return { status: 'trimmed', trimmed, more: false };
  }
  return { status: 'trimmed', trimmed, more: true };
}

/** How many of `rows` (from the start) verify, the link each chain ends at after them, and the first break. */
function verifyPrefix(
  rows: [string, string[]][],
  keyring: AuditKeyring,
  checkpoint: AuditCheckpoint | undefined,
): { verified: number; links: Record<string, string>; broken?: { at: string; reason: string } } {
  const walk = new AuditChainWalk(keyring, checkpoint?.chains);
  const links: Record<string, string> = {};
  for (let i = 0; i < rows.length; i++) {
    const entry = storedEntry(rows[i][0], rows[i][1]);
    const reason = walk.step(entry);
    if (reason) return { verified: i, links, broken: { at: entry.id, reason } };
    links[entry.chain!] = entry.hash!;
  }
  return { verified: rows.length, links };
}

/**
 * Signs the checkpoint after `upTo` and runs the trim script. A chain whose head is the link of its last trimmed entry
 * was trimmed whole: it leaves the checkpoint and its head goes. (Its writer had moved on: a writer starts a new chain
 * after an hour without appends, and retention is at least a day.)
 */
async function apply(
  redis: RedisClient,
  keys: AuditKeys,
  keyring: AuditKeyring,
  expected: string,
  previous: AuditCheckpoint | undefined,
  upTo: string,
  links: Record<string, string>,
  now: Date,
  count = 0,
): Promise<number> {
  const chains: Record<string, string> = { ...previous?.chains, ...links };
  const names = Object.keys(chains);
  const heads = names.length > 0 ? await redis.hmget(keys.heads, ...names) : [];
  const prune = names
    .filter((chain, i) => heads[i] === chains[chain])
    .map((chain) => ({ chain, head: chains[chain] }));
  for (const { chain } of prune) delete chains[chain];
  const checkpoint = signCheckpoint(
    { v: 1, upTo, at: now.toISOString(), trimmed: (previous?.trimmed ?? 0) + count, chains },
    keyring.current,
  );
  const reply = Number(
    await TRIM_SCRIPT.run(
      redis,
      [keys.stream, keys.heads, keys.checkpoint],
      [encodeScriptArgs({ expected, checkpoint, minId: nextStreamId(upTo), prune })],
    ),
  );
  return reply === TrimErrorCode.CheckpointMoved || reply === TrimErrorCode.HeadMoved ? -1 : reply;
}

// One page of the audit log for GET /audit: read newest first in chunks, never more than a bounded part of the stream
// per call, filtered by run, call and what the caller may see.
import type { AuditEntry } from '@countersign/contracts';
import { AuditCheckpointSchema } from './audit-checkpoint';
import { storedEntry, toEntry, type AuditKeys, type StoredEntry } from './audit-entry';
import type { RedisClient } from '@countersign/platform';

/** Stream entries one page reads at most (one request's work and memory). */
export const AUDIT_SCAN_LIMIT = 10_000;
/** Stream entries read per XREVRANGE. */
const CHUNK = 500;

export interface AuditPageQuery {
  runId?: string;
  callId?: string;
  /** Entries to return at most. */
  limit: number;
  /** Read entries older than this stream ID: the `next` of the page before. */
  before?: string;
  /** Whether the caller may see an entry; every entry when left out. Asked for the entries that match the filter. */
  visible?: (entry: AuditEntry) => boolean | Promise<boolean>;
  /** @defaultValue AUDIT_SCAN_LIMIT */
  scanLimit?: number;
}

export interface AuditPage {
  /** Oldest first: the newest `limit` matching entries older than `before`. */
  entries: AuditEntry[];
  /** Set when older entries remain to be read: the `before` of the next page. */
  next?: string;
}

/**
 * Reads back from `before` (or the newest entry) until the page holds `limit` entries, the stream begins, or `scanLimit`
 * entries were read. Each entry's `prevHash` is the hash of the next older entry of its chain, which this read also
 * reaches (within the same scan budget) unless it lies too far back: then `prevHash` is left out.
 */
export async function readAuditPage(
  redis: RedisClient,
  keys: AuditKeys,
  query: AuditPageQuery,
): Promise<AuditPage> {
  const scanLimit = query.scanLimit ?? AUDIT_SCAN_LIMIT;
  const picked: AuditEntry[] = [];
  // Chain → the picked entry whose prevHash is the hash of the next older entry of that chain.
  const waiting = new Map<string, AuditEntry>();
  let scanned = 0;
  let end = query.before ? `(${query.before}` : '+';
  let next: string | undefined;
  let full = false;
  /** Whether the read got past the page's oldest entry (then the next page may hold something). */
  let pastPage = false;
  let startReached = false;
  while (scanned < scanLimit && !(full && waiting.size === 0)) {
    const count = Math.min(CHUNK, scanLimit - scanned);
    const rows = (await redis.xrevrange(keys.stream, end, '-', 'COUNT', count)).map(([id, fields]) =>
      storedEntry(id, fields),
    );
    scanned += rows.length;
    const shown = full ? new Map<string, AuditEntry>() : await matching(rows, query);
    for (const stored of rows) {
      const chain = stored.chain ?? '';
      const newer = waiting.get(chain);
      if (newer) {
        newer.prevHash = stored.hash ?? '';
        waiting.delete(chain);
      }
      if (full) {
        pastPage = true;
        continue;
      }
      const entry = shown.get(stored.id);
      if (!entry) continue;
      picked.push(entry);
      waiting.set(chain, entry);
      full = picked.length >= query.limit;
      if (full) next = stored.id;
    }
    if (rows.length < count) {
      startReached = true;
      break;
    }
    end = `(${rows[rows.length - 1].id}`;
    if (!full) next = rows[rows.length - 1].id;
  }
  if (startReached) {
    // What is left waiting begins its chain, or follows the part retention trimmed.
    if (waiting.size > 0) {
      const trimmed = await checkpointLinks(redis, keys);
      for (const [chain, entry] of waiting) entry.prevHash = trimmed[chain] ?? '';
    }
    // Nothing older than the page's oldest entry: no next page.
    if (!full || !pastPage) next = undefined;
  }
  return { entries: picked.reverse(), ...(next === undefined ? {} : { next }) };
}

/** The entries of `rows` that match the query and that the caller may see, by stream ID. */
async function matching(rows: StoredEntry[], query: AuditPageQuery): Promise<Map<string, AuditEntry>> {
  const candidates: AuditEntry[] = [];
  for (const stored of rows) {
    const json = stored.entry;
    if (json === undefined) continue;
    // Canonical JSON writes a field one way only (IDs need no escaping): most entries are skipped without parsing.
    if (query.callId && !json.includes(`"callId":"${query.callId}"`)) continue;
    if (query.runId && !json.includes(`"runId":"${query.runId}"`)) continue;
    const entry = parsed(stored);
    if (!entry) continue;
    if (query.callId && entry.callId !== query.callId) continue;
    if (query.runId && entry.runId !== query.runId) continue;
    candidates.push(entry);
  }
  const visible = query.visible;
  const allowed = visible ? await Promise.all(candidates.map((e) => visible(e))) : undefined;
  return new Map(candidates.filter((_, i) => !allowed || allowed[i]).map((e) => [e.id, e]));
}

/** The entry, or undefined when the stream holds something that is not one (verify() reports where). */
function parsed(stored: StoredEntry): AuditEntry | undefined {
  try {
    const entry = toEntry(stored, undefined);
    return typeof entry.type === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** The checkpoint's chain links, unverified (a page is for reading; verify() checks the signature). */
async function checkpointLinks(redis: RedisClient, keys: AuditKeys): Promise<Record<string, string>> {
  const stored = await redis.get(keys.checkpoint);
  if (stored === null) return {};
  try {
    const checkpoint = AuditCheckpointSchema.safeParse(JSON.parse(stored));
    return checkpoint.success ? checkpoint.data.chains : {};
  } catch {
    return {};
  }
}

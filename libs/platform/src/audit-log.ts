// Append-only audit log in one Redis Stream shared by every process. Each writer (one AuditLog, one per
// process) keeps its own hash chain in it, so writers never contend; editing or deleting an entry breaks
// its chain, and verify() says where.
import { createHash, randomBytes } from 'node:crypto';
import type { AuditEntry, AuditVerification } from '@countersign/contracts';
import canonicalize from 'canonicalize';
import { LuaScript } from './lua';
import type { RedisClient } from './redis';

export type AuditInput = Omit<
  AuditEntry,
  'id' | 'at' | 'chain' | 'prevHash' | 'hash' | 'service' | 'detail'
> & {
  detail?: Record<string, unknown>;
};

/** What `verify()` reports (`GET /audit/verify`). */
export type ChainCheck = AuditVerification;

const APPEND_SCRIPT = LuaScript.load(__dirname, 'audit-append-2.lua');
/** Entries appended by one script call at most; keeps a single call short. */
const MAX_BATCH = 200;

/** Negative replies of the append script. */
enum AppendErrorCode {
  HeadMoved = -1,
}

export function auditKeys(keyPrefix: string) {
  // One hash tag for both keys: the append script touches them together (Redis Cluster).
  const tag = `{${keyPrefix}:audit}`;
  return { stream: `${tag}:stream`, heads: `${tag}:heads` };
}

/**
 * An entry as stored and hashed: RFC 8785 canonical JSON (the `canonicalize` package, as the policy library's
 * fingerprints use), undefined fields left out. Any change to this output changes every entry's hash.
 */
export function auditEntryJson(entry: object): string {
  const json = canonicalize(stripUndefined(entry));
  if (json === undefined) throw new TypeError('audit entry has no JSON form');
  return json;
}

export function chainHash(prevHash: string, entryJson: string): string {
  return createHash('sha256').update(prevHash).update('\n').update(entryJson).digest('hex');
}

/**
 * The chain's head in Redis is not the one this writer left: another process uses the same chain ID, or
 * Redis lost the writer's last batch. The batch is not written; the writer goes on with a new chain.
 */
export class AuditChainConflictError extends Error {
  constructor(readonly chain: string) {
    super(`audit chain ${chain}: its head in Redis is not this writer's last entry; batch not written`);
    this.name = this.constructor.name;
  }
}

export interface AuditWriterStats {
  /** Append script calls (one round trip each). */
  batches: number;
  /** Entries written. */
  entries: number;
  /** Batches refused because the chain's head was not this writer's (never caused by other writers). */
  conflicts: number;
  /** Chains this writer has started: 1, plus one after each failed batch. */
  chains: number;
}

interface QueuedEntry {
  json: string;
  resolve: (id: string) => void;
  reject: (error: Error) => void;
}

/** A stream entry's fields. */
interface StoredEntry {
  id: string;
  chain?: string;
  entry?: string;
  hash?: string;
}

/**
 * One writer per process: appends are queued and flushed in batches, each batch one script call that
 * extends this writer's own chain, so many concurrent appends cost few round trips and nothing is retried.
 *
 * Stored per entry: `chain`, `entry` (canonical JSON, the hashed content) and `hash`. The link to the
 * previous entry is implied (the previous entry of the same chain), and an entry the service makes in
 * its own name (`actor` = service) stores the name once, as `actor`; `read()` restores both.
 */
export class AuditLog {
  readonly stats: AuditWriterStats = { batches: 0, entries: 0, conflicts: 0, chains: 1 };
  private readonly keys: { stream: string; heads: string };
  private chainId: string;
  private knownHead = '';
  private queue: QueuedEntry[] = [];
  private flushScheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    private readonly service: string,
  ) {
    this.keys = auditKeys(keyPrefix);
    this.chainId = newChainId(service);
  }

  /** The chain this writer extends (`<service>:<8 hex>`). */
  get chain(): string {
    return this.chainId;
  }

  /** Resolves with the stream ID once the entry is durably in the chain. */
  append(input: AuditInput): Promise<string> {
    const { actor, ...rest } = input;
    const body = {
      ...rest,
      detail: input.detail ?? {},
      ...(actor === this.service ? { actor } : { actor, service: this.service }),
      at: new Date().toISOString(),
    };
    const json = auditEntryJson(body);
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ json, resolve, reject });
      this.startFlush();
    });
  }

  /**
   * Sends what is queued at the end of the tick, without waiting for batches still in flight: each batch is
   * hashed onto the head the previous one will leave (knownHead moves when a batch is sent), and one
   * connection delivers them in order, so an entry waits for at most one round trip, never for a queue of
   * batches ahead of it. A batch that fails takes this chain's later batches with it (their head check fails
   * too) and the writer goes on with a new chain.
   */
  private startFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      while (this.queue.length > 0) this.send(this.queue.splice(0, MAX_BATCH));
    });
  }

  /** Waits until everything appended so far is written (or has failed). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight.size > 0) {
      if (this.inFlight.size > 0) await Promise.all(this.inFlight);
      else await new Promise<void>((resolve) => queueMicrotask(resolve));
    }
  }

  private send(batch: QueuedEntry[]): void {
    const sent: Promise<void> = this.appendBatch(batch.map((e) => e.json)).then(
      (ids) => batch.forEach((e, i) => e.resolve(ids[i])),
      (error: Error) => batch.forEach((e) => e.reject(error)),
    );
    const tracked = sent.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async appendBatch(jsons: string[]): Promise<string[]> {
    const chain = this.chainId;
    const args: string[] = [chain, this.knownHead];
    let head = this.knownHead;
    for (const json of jsons) {
      head = chainHash(head, json);
      args.push(head, json);
    }
    // The next batch links to this one's last entry, whether or not this one has been answered yet.
    this.knownHead = head;
    this.stats.batches++;
    let reply: unknown;
    try {
      reply = await APPEND_SCRIPT.run(this.redis, [this.keys.stream, this.keys.heads], args);
    } catch (error) {
      // Whether the batch landed is unknown, and so is this chain's head: go on with a new chain.
      this.startChain(chain);
      throw error;
    }
    if (reply === AppendErrorCode.HeadMoved) {
      // Never forks: the chain stays as Redis has it, and this writer's later entries start a new one.
      this.stats.conflicts++;
      this.startChain(chain);
      throw new AuditChainConflictError(chain);
    }
    this.stats.entries += jsons.length;
    return reply as string[];
  }

  /** A new chain, unless `failed` is no longer the current one (an earlier failure already replaced it). */
  private startChain(failed: string): void {
    if (failed !== this.chainId) return;
    this.chainId = newChainId(this.service);
    this.knownHead = '';
    this.stats.chains++;
  }

  /** Entries oldest first (stream order, all chains), optionally only those of one run or call. */
  async read(filter: { runId?: string; callId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const rows = await this.redis.xrange(this.keys.stream, '-', '+');
    // Links are computed over the whole stream: the previous entry of a chain may not match the filter.
    const lastHash = new Map<string, string>();
    const entries = rows.map(([id, fields]) => {
      const stored = storedEntry(id, fields);
      const chain = stored.chain ?? '';
      const prevHash = lastHash.get(chain) ?? '';
      lastHash.set(chain, stored.hash ?? '');
      return toEntry(stored, chain, prevHash);
    });
    const matching = entries.filter(
      (e) => (!filter.runId || e.runId === filter.runId) && (!filter.callId || e.callId === filter.callId),
    );
    return filter.limit ? matching.slice(-filter.limit) : matching;
  }

  /**
   * Walks the stream once, checking every entry's hash against the previous hash of its chain, then that
   * each chain ends at its head and each head has entries. Reports the first break.
   */
  async verify(): Promise<ChainCheck> {
    const { rows, heads } = await this.snapshot();
    const last = new Map<string, { id: string; hash: string }>();
    let brokenAt: { id: string; reason: string } | undefined;
    for (const { id, chain, entry, hash } of rows) {
      if (chain === undefined || entry === undefined || hash === undefined) {
        brokenAt ??= { id, reason: 'not an entry of a writer chain (no chain, entry or hash field)' };
        continue;
      }
      const prev = last.get(chain)?.hash ?? '';
      if (chainHash(prev, entry) !== hash)
        brokenAt ??= {
          id,
          reason: `entry does not match its hash: it was changed, or the entry before it in chain ${chain} is missing`,
        };
      last.set(chain, { id, hash });
    }
    brokenAt ??= headMismatch(last, heads);
    const chains = new Set([...last.keys(), ...Object.keys(heads)]).size;
    return { intact: !brokenAt, entries: rows.length, chains, ...(brokenAt ? { brokenAt } : {}) };
  }

  /** The stream and the heads as of one moment (a transaction), so an append in between cannot look like a break. */
  private async snapshot(): Promise<{ rows: StoredEntry[]; heads: Record<string, string> }> {
    const replies = await this.redis
      .multi()
      .xrange(this.keys.stream, '-', '+')
      .hgetall(this.keys.heads)
      .exec();
    if (!replies) throw new Error('audit snapshot transaction was aborted');
    const [[streamError, rows], [headsError, heads]] = replies as [
      [Error | null, [string, string[]][]],
      [Error | null, Record<string, string>],
    ];
    if (streamError ?? headsError) throw (streamError ?? headsError) as Error;
    return { rows: rows.map(([id, fields]) => storedEntry(id, fields)), heads };
  }
}

function headMismatch(
  last: Map<string, { id: string; hash: string }>,
  heads: Record<string, string>,
): { id: string; reason: string } | undefined {
  for (const [chain, { id, hash }] of last) {
    const head = heads[chain];
    if (head === undefined) return { id, reason: `chain ${chain} has no head (its head was deleted)` };
    if (head !== hash) return { id, reason: `newest entries of chain ${chain} are missing` };
  }
  const empty = Object.keys(heads).find((chain) => !last.has(chain));
  return empty ? { id: '-', reason: `chain ${empty} has no entries (all of them are missing)` } : undefined;
}

function newChainId(service: string): string {
  return `${service}:${randomBytes(4).toString('hex')}`;
}

function storedEntry(id: string, fields: string[]): StoredEntry {
  const stored: StoredEntry = { id };
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === 'chain' || name === 'entry' || name === 'hash') stored[name] = fields[i + 1];
  }
  return stored;
}

function toEntry(stored: StoredEntry, chain: string, prevHash: string): AuditEntry {
  const body = JSON.parse(stored.entry ?? '{}') as Omit<AuditEntry, 'id' | 'chain' | 'prevHash' | 'hash'>;
  return {
    ...body,
    // Stored once when the service acted in its own name.
    service: body.service ?? body.actor ?? '',
    id: stored.id,
    chain,
    prevHash,
    hash: stored.hash ?? '',
  };
}

function stripUndefined<T extends object>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// Append-only audit log in one Redis Stream shared by every process (or AUDIT_SHARDS streams, see audit-shards.ts).
// Each writer (one AuditLog, one per process) keeps its own HMAC chain in it, so writers never contend; editing or
// deleting an entry breaks its chain, rewriting a chain takes the signing key, and verify() says where a chain breaks.
import { randomBytes } from 'node:crypto';
import type { AuditEntry, AuditVerification } from '@countersign/contracts';
import { auditEntryJson, auditKeys, chainId, type AuditInput, type AuditKeys } from './audit-entry';
import type { AuditKeyring } from './audit-keyring';
import { AUDIT_SCAN_LIMIT, readAuditPage, type AuditPage, type AuditPageQuery } from './audit-page-reader';
import { trimAuditLog, type TrimResult } from './audit-retention';
import { mergeAuditPages, mergeTrims, mergeVerifications } from './audit-shards';
import { queueShardOf } from '@countersign/platform';
import { verifyAuditLog } from './audit-verifier';
import { LuaScript } from '@countersign/platform';
import type { RedisClient } from '@countersign/platform';

/** What `verify()` reports (`GET /audit/verify`). */
export type ChainCheck = AuditVerification;

const APPEND_SCRIPT = LuaScript.load(__dirname, 'audit-append-2.lua');
/** Entries appended by one script call at most; keeps a single call short. */
const MAX_BATCH = 200;
/**
 * A writer that has not appended for this long starts a new chain with its next append. So a chain whose entries are
 * all past the retention (at least a day) is finished, and retention can remove it whole, head and all.
 */
export const AUDIT_CHAIN_IDLE_MS = 3_600_000;
/** The shortest retention trim() accepts: well above AUDIT_CHAIN_IDLE_MS, so it never removes a chain still in use. */
export const MIN_AUDIT_RETENTION_MS = 86_400_000;

/** Negative replies of the append script. */
enum AppendErrorCode {
  HeadMoved = -1,
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
  /** Chains this writer has started: 1, plus one after each failed batch and after each idle hour. */
  chains: number;
}

export interface AuditLogOptions {
  /** The clock (ms) that tells an idle writer and the retention cutoff; tests pass their own. */
  now?: () => number;
  /**
   * Streams of the log (AUDIT_SHARDS): every writer and reader of one log must say the same.
   * @defaultValue 1
   */
  shards?: number;
}

interface QueuedEntry {
  json: string;
  resolve: (id: string) => void;
  reject: (error: Error) => void;
}

/**
 * One writer per process: appends are queued and flushed in batches, each batch one script call that
 * extends this writer's own chain, so many concurrent appends cost few round trips and nothing is retried.
 *
 * Stored per entry: `chain`, `entry` (canonical JSON, the linked content) and `hash` (its HMAC link). The link to
 * the previous entry is implied (the previous entry of the same chain), and an entry the service makes in
 * its own name (`actor` = service) stores the name once, as `actor`; reading restores both.
 */
export class AuditLog {
  readonly stats: AuditWriterStats = { batches: 0, entries: 0, conflicts: 0, chains: 1 };
  /** Every stream's keys; a chain's entries go to the stream of its ID. */
  private readonly streams: AuditKeys[];
  private readonly now: () => number;
  private chainId: string;
  private knownHead = '';
  /** When this writer last sent a batch (its clock). */
  private lastSentAt = 0;
  private queue: QueuedEntry[] = [];
  private flushScheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    private readonly service: string,
    private readonly keyring: AuditKeyring,
    options: AuditLogOptions = {},
  ) {
    const shards = options.shards ?? 1;
    this.streams = Array.from({ length: shards }, (_, shard) => auditKeys(keyPrefix, shard, shards));
    this.now = options.now ?? Date.now;
    this.chainId = this.newChainId();
  }

  /** The chain this writer extends (`<service>:<8 hex>:<key ID>`). */
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
   * The entries of one transition, in order, in one script call (each still its own chained, signed entry; more
   * than a batch holds would take more calls). Resolves with their stream IDs once every one is durable, and
   * rejects if any is not.
   */
  appendAll(inputs: readonly AuditInput[]): Promise<string[]> {
    // append() only queues: entries queued in one tick go out in one batch.
    return Promise.all(inputs.map((input) => this.append(input)));
  }

  /**
   * Sends what is queued at the end of the tick, without waiting for batches still in flight: each batch is
   * linked onto the head the previous one will leave (knownHead moves when a batch is sent), and one
   * connection delivers them in order, so an entry waits for at most one round trip, never for a queue of
   * batches ahead of it. A batch that fails takes this chain's later batches with it (their head check fails
   * too) and the writer goes on with a new chain.
   */
  private startFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /**
   * Sends what is queued now rather than at the end of the tick: a command the caller sends right after travels in
   * the same pipeline of the connection (the connection sends one pipeline at a time, so a batch sent a moment later
   * could wait a whole round trip behind it).
   */
  flush(): void {
    while (this.queue.length > 0) this.send(this.queue.splice(0, MAX_BATCH));
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
    const now = this.now();
    if (this.knownHead !== '' && now - this.lastSentAt > AUDIT_CHAIN_IDLE_MS) this.startChain(this.chainId);
    this.lastSentAt = now;
    const chain = this.chainId;
    const key = this.keyring.current;
    const args: string[] = [chain, this.knownHead];
    let head = this.knownHead;
    for (const json of jsons) {
      head = key.entryMac(chain, head, json);
      args.push(head, json);
    }
    // The next batch links to this one's last entry, whether or not this one has been answered yet.
    this.knownHead = head;
    this.stats.batches++;
    let reply: unknown;
    try {
      const keys = this.streamOf(chain);
      reply = await APPEND_SCRIPT.run(this.redis, [keys.stream, keys.heads], args);
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
    this.chainId = this.newChainId();
    this.knownHead = '';
    this.stats.chains++;
  }

  /** The stream that holds a chain: the same for every batch of it, whoever computes it. */
  private streamOf(chain: string): AuditKeys {
    return this.streams[queueShardOf(chain, this.streams.length)];
  }

  private newChainId(): string {
    return chainId(this.service, randomBytes(4).toString('hex'), this.keyring.current.id);
  }

  /**
   * One page for GET /audit: the newest `limit` matching entries older than `before`, reading at most a bounded part
   * of the stream (see readAuditPage).
   */
  async readPage(query: AuditPageQuery): Promise<AuditPage> {
    if (this.streams.length === 1) return readAuditPage(this.redis, this.streams[0], query);
    // The scan budget is the request's, shared by the streams.
    const scanLimit = Math.ceil((query.scanLimit ?? AUDIT_SCAN_LIMIT) / this.streams.length);
    const pages = await Promise.all(
      this.streams.map((keys) => readAuditPage(this.redis, keys, { ...query, scanLimit })),
    );
    return mergeAuditPages(pages, query.limit);
  }

  /**
   * Every matching entry, oldest first, page after page. It reads the whole stream: for tests and tools, not for a
   * request path (GET /audit reads one page).
   */
  async read(filter: { runId?: string; callId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const pages: AuditEntry[][] = [];
    let count = 0;
    let before: string | undefined;
    do {
      const page = await this.readPage({ ...filter, limit: filter.limit ?? 10_000, before });
      pages.unshift(page.entries);
      count += page.entries.length;
      before = page.next;
    } while (before !== undefined && (filter.limit === undefined || count < filter.limit));
    const entries = pages.flat();
    return filter.limit ? entries.slice(-filter.limit) : entries;
  }

  /**
   * Walks the stream in chunks, checking every entry's link under its chain's key from where the retention checkpoint
   * left the chain, then that each chain ends at its head. Reports the first break.
   */
  async verify(): Promise<ChainCheck> {
    const checks = await Promise.all(
      this.streams.map((keys) => verifyAuditLog(this.redis, keys, this.keyring)),
    );
    return mergeVerifications(checks);
  }

  /** Retention: trims entries older than `retentionMs` (before `now`) behind a signed checkpoint (see trimAuditLog). */
  async trim(retentionMs: number, now = this.now()): Promise<TrimResult> {
    if (!(retentionMs >= MIN_AUDIT_RETENTION_MS))
      throw new RangeError(
        `audit retention must be at least ${MIN_AUDIT_RETENTION_MS} ms, got ${retentionMs}`,
      );
    const cutoff = now - retentionMs;
    const results = await Promise.all(
      this.streams.map((keys) => trimAuditLog(this.redis, keys, this.keyring, cutoff, new Date(now))),
    );
    return mergeTrims(results);
  }
}

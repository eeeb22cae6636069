// The tool catalog and the decided-call results (see tool-catalog.ts in @countersign/contracts): the agent worker
// writes both, the approval service reads them to show approvers what a tool does and what became of a decided call.
import {
  decidedCallResultKey,
  DecidedCallResultSchema,
  toolCatalogKey,
  ToolCatalogEntrySchema,
  type DecidedCallResult,
  type ToolCatalogEntry,
} from '@countersign/contracts';
import type { RedisClient } from '@countersign/platform';

export class ToolCatalog {
  private readonly key: string;
  /** Entries are content-addressed (the key is the definition's hash), so what was read or written never changes. */
  private readonly known = new Map<string, ToolCatalogEntry>();

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = toolCatalogKey(keyPrefix);
  }

  /** Stores each definition once (HSETNX); a definition this process stored or read before costs nothing. */
  async publish(definitions: readonly { definitionHash: string; entry: ToolCatalogEntry }[]): Promise<void> {
    const fresh = definitions.filter((d) => !this.known.has(d.definitionHash));
    if (fresh.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const d of fresh) pipeline.hsetnx(this.key, d.definitionHash, JSON.stringify(d.entry));
    await pipeline.exec();
    for (const d of fresh) this.known.set(d.definitionHash, d.entry);
  }

  /** The definitions of these hashes that are known (an unknown or unreadable one is left out). */
  async get(hashes: readonly string[]): Promise<Map<string, ToolCatalogEntry>> {
    const found = new Map<string, ToolCatalogEntry>();
    const missing = [...new Set(hashes)].filter((h) => {
      const entry = this.known.get(h);
      if (entry) found.set(h, entry);
      return !entry;
    });
    if (missing.length === 0) return found;
    const values = await this.redis.hmget(this.key, ...missing);
    missing.forEach((hash, i) => {
      const entry = parseEntry(values[i]);
      if (!entry) return;
      this.known.set(hash, entry);
      found.set(hash, entry);
    });
    return found;
  }

  /** Every stored definition of a tool name (a deploy that changed the tool adds one). */
  async byName(name: string): Promise<ToolCatalogEntry[]> {
    const all = await this.redis.hvals(this.key);
    return all.map(parseEntry).filter((e): e is ToolCatalogEntry => e?.name === name);
  }
}

function parseEntry(json: string | null | undefined): ToolCatalogEntry | undefined {
  if (!json) return undefined;
  try {
    const parsed = ToolCatalogEntrySchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export class DecidedCallResults {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  /** By request ID: a call ID may name several requests (re-asked, reused by a later turn or another run). */
  async record(requestId: string, result: DecidedCallResult, ttlMs: number): Promise<void> {
    const value = JSON.stringify(DecidedCallResultSchema.parse(result));
    await this.redis.set(decidedCallResultKey(this.keyPrefix, requestId), value, 'PX', Math.max(1, ttlMs));
  }

  /** Results of these requests, by request ID; one without a result (not run yet, or aged out) is left out. */
  async read(requestIds: readonly string[]): Promise<Map<string, DecidedCallResult>> {
    const found = new Map<string, DecidedCallResult>();
    if (requestIds.length === 0) return found;
    const values = await this.redis.mget(...requestIds.map((id) => decidedCallResultKey(this.keyPrefix, id)));
    requestIds.forEach((id, i) => {
      try {
        const parsed = DecidedCallResultSchema.safeParse(JSON.parse(values[i] ?? 'null'));
        if (parsed.success) found.set(id, parsed.data);
      } catch {
        // unreadable: shown as "no result yet"
      }
    });
    return found;
  }
}

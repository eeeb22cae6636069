// Append-only audit log in a Redis Stream. Each entry carries the hash of the one before,
// so deleting or editing an entry breaks the chain, and verify() says where.
import { createHash } from 'node:crypto';
import type { AuditEntry } from '@countersign/contracts';
import { canonicalJson } from '@countersign/authorization';
import { LuaScript } from './lua';
import type { RedisClient } from './redis';

export type AuditInput = Omit<AuditEntry, 'id' | 'at' | 'prevHash' | 'hash' | 'service' | 'detail'> & {
  detail?: Record<string, unknown>;
};

export interface ChainCheck {
  intact: boolean;
  entries: number;
  /** The first entry whose link or hash is wrong. */
  brokenAt?: { id: string; reason: string };
}

const APPEND_SCRIPT = LuaScript.load(__dirname, 'audit-append-2.lua');
const MAX_APPEND_ATTEMPTS = 100;
/** Entries appended by one script call at most; keeps a single call short. */
const MAX_BATCH = 200;

export function auditKeys(keyPrefix: string) {
  // One hash tag for both keys: the append script touches them together (Redis Cluster).
  const tag = `{${keyPrefix}:audit}`;
  return { stream: `${tag}:stream`, head: `${tag}:head` };
}

export function chainHash(prevHash: string, entryJson: string): string {
  return createHash('sha256').update(prevHash).update('\n').update(entryJson).digest('hex');
}

interface QueuedEntry {
  json: string;
  resolve: (id: string) => void;
  reject: (error: Error) => void;
}

/**
 * One writer per process: appends are queued and flushed in batches, each batch one compare-and-set
 * script call, so many concurrent appends cost few round trips and never fight each other in-process.
 */
export class AuditLog {
  private readonly keys: { stream: string; head: string };
  private knownHead = '';
  private queue: QueuedEntry[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    private readonly service: string,
  ) {
    this.keys = auditKeys(keyPrefix);
  }

  /** Resolves with the stream ID once the entry is durably in the chain. */
  append(input: AuditInput): Promise<string> {
    const body = {
      ...input,
      detail: input.detail ?? {},
      service: this.service,
      at: new Date().toISOString(),
    };
    const json = canonicalJson(stripUndefined(body));
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ json, resolve, reject });
      this.startFlush();
    });
  }

  private startFlush(): void {
    // A caller resumed by the last batch may append before this flush's `finally` ran; such an entry found
    // `flushing` still set and must not be left in the queue, so a finished flush starts again for it.
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.startFlush();
    });
  }

  /** Waits until everything appended so far is written. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const ids = await this.appendBatch(batch.map((e) => e.json));
        batch.forEach((e, i) => e.resolve(ids[i]));
      } catch (error) {
        batch.forEach((e) => e.reject(error as Error));
      }
    }
  }

  private async appendBatch(jsons: string[]): Promise<string[]> {
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const expected = this.knownHead;
      const args: string[] = [expected];
      let prev = expected;
      for (const json of jsons) {
        prev = chainHash(prev, json);
        args.push(prev, json);
      }
      const reply = (await APPEND_SCRIPT.run(this.redis, [this.keys.stream, this.keys.head], args)) as [
        number,
        ...string[],
      ];
      if (reply[0] === 1) {
        this.knownHead = prev;
        return reply.slice(1) as string[];
      }
      this.knownHead = reply[1];
    }
    throw new Error(`audit append lost the race ${MAX_APPEND_ATTEMPTS} times`);
  }

  /** Entries oldest first, optionally only those of one run or call. */
  async read(filter: { runId?: string; callId?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const rows = await this.redis.xrange(this.keys.stream, '-', '+');
    const entries = rows.map(([id, fields]) => toEntry(id, fields));
    const matching = entries.filter(
      (e) => (!filter.runId || e.runId === filter.runId) && (!filter.callId || e.callId === filter.callId),
    );
    return filter.limit ? matching.slice(-filter.limit) : matching;
  }

  async verify(): Promise<ChainCheck> {
    const rows = await this.redis.xrange(this.keys.stream, '-', '+');
    let prev = '';
    for (const [id, fields] of rows) {
      const f = fieldMap(fields);
      if (f.prev !== prev)
        return {
          intact: false,
          entries: rows.length,
          brokenAt: { id, reason: 'link to the previous entry does not match' },
        };
      if (chainHash(prev, f.entry) !== f.hash)
        return {
          intact: false,
          entries: rows.length,
          brokenAt: { id, reason: 'entry content does not match its hash' },
        };
      prev = f.hash;
    }
    const head = (await this.redis.get(this.keys.head)) ?? '';
    if (head !== prev) {
      return {
        intact: false,
        entries: rows.length,
        brokenAt: { id: rows.at(-1)?.[0] ?? '-', reason: 'newest entries are missing' },
      };
    }
    return { intact: true, entries: rows.length };
  }
}

function fieldMap(fields: string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return map;
}

function toEntry(id: string, fields: string[]): AuditEntry {
  const f = fieldMap(fields);
  return {
    ...(JSON.parse(f.entry) as Omit<AuditEntry, 'id' | 'prevHash' | 'hash'>),
    id,
    prevHash: f.prev,
    hash: f.hash,
  };
}

function stripUndefined<T extends object>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

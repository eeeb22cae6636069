// The audit log over three streams (AUDIT_SHARDS=3) on one Redis: each writer's chain lives in the stream of its chain
// ID; reading, verifying and trimming go over all of them.
import { Redis } from 'ioredis';
import { queueShardOf } from '@countersign/platform';
import { AuditLog, auditKeys, MIN_AUDIT_RETENTION_MS } from '@countersign/audit';
import { testAuditKeyring } from './support/audit';
import { freshKeyPrefixes, TEST_REDIS_URL } from './support/redis';

const SHARDS = 3;
const keyring = testAuditKeyring();

describe('AuditLog over three streams (real Redis)', () => {
  const prefixes = freshKeyPrefixes('audit-shards');
  const freshPrefix = () => prefixes.fresh();
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await prefixes.deleteAll();
  });

  /** `writers` writers (as processes would be) taking turns, `count` entries in all, callId c-0 … in order. */
  async function written(keyPrefix: string, writers: number, count: number): Promise<AuditLog[]> {
    const logs = Array.from(
      { length: writers },
      (_, i) => new AuditLog(redis, keyPrefix, `svc-${i}`, keyring, { shards: SHARDS }),
    );
    for (let n = 0; n < count; n++)
      await logs[n % writers].append({ type: 'tool.executed', runId: `run-${n % 2}`, callId: `c-${n}` });
    return logs;
  }

  /** The chains found in each stream, by shard. */
  async function chainsByStream(keyPrefix: string): Promise<Set<string>[]> {
    return Promise.all(
      Array.from({ length: SHARDS }, async (_, shard) => {
        const rows = await redis.xrange(auditKeys(keyPrefix, shard, SHARDS).stream, '-', '+');
        return new Set(rows.map(([, fields]) => fields[fields.indexOf('chain') + 1]));
      }),
    );
  }

  it('keeps the one-stream keys when there is one shard', () => {
    expect(auditKeys('cs', 0, 1)).toEqual(auditKeys('cs'));
    expect(auditKeys('cs').stream).toBe('{cs:audit}:stream');
    expect(auditKeys('cs', 1, SHARDS).stream).toMatch(/^\{cs:audit:s1(\.\d+)?\}:stream$/);
  });

  it("puts each writer's chain whole in the stream of its chain ID, so writers spread over the streams", async () => {
    const keyPrefix = freshPrefix();
    const logs = await written(keyPrefix, 12, 36);
    const streams = await chainsByStream(keyPrefix);
    for (const log of logs) {
      const holding = streams.flatMap((chains, shard) => (chains.has(log.chain) ? [shard] : []));
      expect(holding).toEqual([queueShardOf(log.chain, SHARDS)]);
    }
    // Twelve random chain IDs in three streams: all in one would be 3 × (1/3)^12.
    expect(streams.filter((chains) => chains.size > 0).length).toBeGreaterThan(1);
  });

  it('reads every stream, newest first, a page at a time, each entry once, in stream ID order', async () => {
    const keyPrefix = freshPrefix();
    await written(keyPrefix, 6, 40);
    const sut = new AuditLog(redis, keyPrefix, 'reader', keyring, { shards: SHARDS });
    const pages: string[][] = [];
    const ids: string[] = [];
    let before: string | undefined;
    do {
      const page = await sut.readPage({ limit: 7, before });
      expect(page.entries.length).toBeLessThanOrEqual(7);
      pages.unshift(page.entries.map((e) => e.callId!));
      ids.unshift(...page.entries.map((e) => e.id));
      before = page.next;
    } while (before && pages.length < 40);
    const read = pages.flat();
    expect([...read].sort()).toEqual(Array.from({ length: 40 }, (_, n) => `c-${n}`).sort());
    const byTime = (id: string) => id.split('-').map(Number);
    for (let i = 1; i < ids.length; i++) {
      const [[ms, seq], [prevMs, prevSeq]] = [byTime(ids[i]), byTime(ids[i - 1])];
      expect(ms > prevMs || (ms === prevMs && seq >= prevSeq)).toBe(true);
    }
    // Filters apply across the streams too.
    const run1 = await sut.readPage({ runId: 'run-1', limit: 100 });
    expect(run1.entries.map((e) => e.callId).sort()).toEqual(
      Array.from({ length: 20 }, (_, n) => `c-${2 * n + 1}`).sort(),
    );
    expect(run1.next).toBeUndefined();
  });

  it('verifies every stream, and finds an entry deleted from any of them', async () => {
    const keyPrefix = freshPrefix();
    const logs = await written(keyPrefix, 6, 30);
    const sut = new AuditLog(redis, keyPrefix, 'reader', keyring, { shards: SHARDS });
    await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 30, chains: 6 });

    // Delete the first entry of a chain held by a stream other than the first: its next entry no longer links.
    const victim = logs.find((log) => queueShardOf(log.chain, SHARDS) !== 0)!;
    const keys = auditKeys(keyPrefix, queueShardOf(victim.chain, SHARDS), SHARDS);
    const rows = await redis.xrange(keys.stream, '-', '+');
    const [first] = rows.filter(([, fields]) => fields[fields.indexOf('chain') + 1] === victim.chain);
    await redis.xdel(keys.stream, first[0]);
    const check = await sut.verify();
    expect(check.intact).toBe(false);
    expect(check.brokenAt).toBeDefined();
  });

  it('trims every stream past the retention, and what is left verifies', async () => {
    const keyPrefix = freshPrefix();
    await written(keyPrefix, 6, 24);
    const sut = new AuditLog(redis, keyPrefix, 'reader', keyring, { shards: SHARDS });
    // A clock past every entry's retention: all 24 are due.
    const later = Date.now() + MIN_AUDIT_RETENTION_MS + 60_000;
    await expect(sut.trim(MIN_AUDIT_RETENTION_MS, later)).resolves.toEqual({
      status: 'trimmed',
      trimmed: 24,
      more: false,
    });
    const lengths = await Promise.all(
      [0, 1, 2].map((shard) => redis.xlen(auditKeys(keyPrefix, shard, SHARDS).stream)),
    );
    expect(lengths).toEqual([0, 0, 0]);
    await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 0 });
  });
});

// The shared audit log: append-only, hash-chained, and verify() finds where the chain breaks.
import { Redis } from 'ioredis';
import { AuditLog, auditKeys } from '@countersign/platform';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

describe('AuditLog (real Redis)', () => {
  const prefixes = uniquePrefixes('audit');
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefixedKeys(prefixes);
  });

  it('chains every entry to the one before, even with several writers racing', async () => {
    const connections = [0, 1, 2].map(() => redis.duplicate());
    const writers = connections.map((c, i) => new AuditLog(c, prefixes.keyPrefix, `svc-${i}`));
    await Promise.all(
      writers.flatMap((w, i) =>
        Array.from({ length: 30 }, (_, n) =>
          w.append({ type: 'tool.executed', runId: `run-${i}`, callId: `c-${i}-${n}` }),
        ),
      ),
    );
    connections.forEach((c) => c.disconnect());
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'reader');
    const entries = await sut.read();
    expect(entries).toHaveLength(90);
    entries.forEach((entry, i) => expect(entry.prevHash).toBe(i === 0 ? '' : entries[i - 1].hash));
    await expect(sut.verify()).resolves.toEqual({ intact: true, entries: 90 });
    expect(await sut.read({ runId: 'run-1' })).toHaveLength(30);
    expect(await sut.read({ callId: 'c-2-7' })).toEqual([
      expect.objectContaining({ runId: 'run-2', service: 'svc-2' }),
    ]);
  });

  it('reports the first entry whose content was changed', async () => {
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'reader');
    const { stream } = auditKeys(prefixes.keyPrefix);
    const [[id, fields]] = await redis.xrange(stream, '-', '+', 'COUNT', 5).then((rows) => rows.slice(3, 4));
    const forged = [...fields];
    const entryIndex = forged.indexOf('entry') + 1;
    forged[entryIndex] = forged[entryIndex].replace('tool.executed', 'tool.denied');
    // A stream entry cannot be edited in place; delete and re-add with the same ID to play an attacker.
    await redis.xdel(stream, id);
    await redis.xadd(stream, id, ...forged).catch(async () => {
      // IDs must grow; the attacker appends the forged copy instead.
      await redis.xadd(stream, '*', ...forged);
    });
    const check = await sut.verify();
    expect(check.intact).toBe(false);
    expect(check.brokenAt?.reason).toMatch(/does not match/);
  });
});

// Batching of AuditLog appends. Regression: an append made by a caller the moment its previous append resolved
// used to be stranded in the batch queue (the finishing flush had already seen it empty), hanging that run forever.
import { Redis } from 'ioredis';
import { AuditLog, auditKeys } from '@countersign/audit';
import { testAuditKeyring } from './support/audit';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

describe('AuditLog batching (real Redis)', () => {
  const prefixes = uniquePrefixes('audit-append');
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefixedKeys(prefixes);
  });

  it('writes an entry appended right after the previous one resolved', async () => {
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'svc', testAuditKeyring());
    for (let n = 0; n < 20; n++)
      await sut.append({ type: 'tool.executed', runId: 'run-1', callId: `c-${n}` });
    expect(await sut.read({ runId: 'run-1' })).toHaveLength(20);
  }, 10_000);

  it('writes many appends made at once in a few batches, in order, and drains them', async () => {
    const sut = new AuditLog(redis, prefixes.keyPrefix, 'svc', testAuditKeyring());
    const appended = Array.from({ length: 450 }, (_, n) =>
      sut.append({ type: 'tool.executed', runId: 'run-batch', callId: `c-${n}` }),
    );
    await sut.drain();
    const ids = await Promise.all(appended);
    // All 450 were appended in one tick: batches of at most 200.
    expect(sut.stats).toMatchObject({ batches: 3, entries: 450, conflicts: 0 });
    const read = await sut.read({ runId: 'run-batch' });
    expect(read.map((e) => e.id)).toEqual(ids);
    expect(read.map((e) => e.callId)).toEqual(Array.from({ length: 450 }, (_, n) => `c-${n}`));
  });

  it('writes the entries of one appendAll in one script call, each its own link, and the chain verifies', async () => {
    const { keyPrefix } = uniquePrefixes('audit-append-all');
    try {
      const sut = new AuditLog(redis, keyPrefix, 'svc', testAuditKeyring());
      await sut.append({ type: 'run.parked', runId: 'run-a' });
      const ids = await sut.appendAll([
        { type: 'decision.received', runId: 'run-a', callId: 'c-1', actor: 'alice' },
        { type: 'run.resumed', runId: 'run-a' },
      ]);
      expect(sut.stats).toMatchObject({ batches: 2, entries: 3, conflicts: 0, chains: 1 });
      const [parked, received, resumed] = await sut.read({ runId: 'run-a' });
      expect([received.id, resumed.id]).toEqual(ids);
      expect([received.type, resumed.type]).toEqual(['decision.received', 'run.resumed']);
      expect(received.prevHash).toBe(parked.hash);
      expect(resumed.prevHash).toBe(received.hash);
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 3, chains: 1 });
    } finally {
      await deletePrefixedKeys({ keyPrefix, queuePrefix: `{${keyPrefix}}` });
    }
  });

  it('sends what is queued at flush(), ahead of a command sent right after it', async () => {
    const { keyPrefix } = uniquePrefixes('audit-append-flush');
    const sent: string[] = [];
    const spy = new Redis(TEST_REDIS_URL);
    const evalsha = spy.evalsha.bind(spy) as (...args: unknown[]) => Promise<unknown>;
    (spy as unknown as { evalsha: typeof evalsha }).evalsha = (...args) => {
      sent.push('audit');
      return evalsha(...args);
    };
    try {
      const sut = new AuditLog(spy, keyPrefix, 'svc', testAuditKeyring());
      const appended = sut.append({ type: 'decision.received', runId: 'run-f' });
      sut.flush();
      sent.push('next command');
      await appended;
      expect(sent).toEqual(['audit', 'next command']);
      // Without flush() the batch goes out at the end of the tick, after the caller's next command.
      sent.length = 0;
      const later = sut.append({ type: 'run.resumed', runId: 'run-f' });
      sent.push('next command');
      await later;
      expect(sent).toEqual(['next command', 'audit']);
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 2, chains: 1 });
    } finally {
      spy.disconnect();
      await deletePrefixedKeys({ keyPrefix, queuePrefix: `{${keyPrefix}}` });
    }
  });

  it('sends a batch while the one before it is still in flight, and the chain verifies', async () => {
    const { keyPrefix } = uniquePrefixes('audit-append-pipelined');
    const slow = new Redis(TEST_REDIS_URL);
    let inFlight = 0;
    let mostInFlight = 0;
    const evalsha = slow.evalsha.bind(slow) as (...args: unknown[]) => Promise<unknown>;
    (slow as unknown as { evalsha: typeof evalsha }).evalsha = async (...args) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      try {
        return await evalsha(...args);
      } finally {
        inFlight--;
      }
    };
    try {
      const sut = new AuditLog(slow, keyPrefix, 'svc', testAuditKeyring());
      const first = sut.append({ type: 'tool.executed', runId: 'run-p', callId: 'c-0' });
      await new Promise((resolve) => setImmediate(resolve)); // the first batch is on its way
      const second = sut.append({ type: 'tool.executed', runId: 'run-p', callId: 'c-1' });
      await Promise.all([first, second]);
      expect(mostInFlight).toBe(2);
      expect(sut.stats).toMatchObject({ batches: 2, entries: 2, conflicts: 0, chains: 1 });
      expect(await sut.verify()).toMatchObject({ intact: true, entries: 2, chains: 1 });
      const [a, b] = await sut.read({ runId: 'run-p' });
      expect(b.prevHash).toBe(a.hash);
    } finally {
      slow.disconnect();
      await deletePrefixedKeys({ keyPrefix, queuePrefix: `{${keyPrefix}}` });
    }
  });

  it('fails the batch a Redis error hit, and goes on with a new chain that verifies', async () => {
    const { keyPrefix } = uniquePrefixes('audit-append-fail');
    const keys = auditKeys(keyPrefix);
    try {
      const sut = new AuditLog(redis, keyPrefix, 'svc', testAuditKeyring());
      await sut.append({ type: 'run.parked', runId: 'run-1' });
      const first = sut.chain;
      const heads = await redis.hgetall(keys.heads);
      await redis.set(keys.heads, 'not a hash'); // the script's HGET fails with WRONGTYPE
      await expect(sut.append({ type: 'run.resumed', runId: 'run-1' })).rejects.toThrow(/WRONGTYPE/);
      await redis.del(keys.heads);
      await redis.hset(keys.heads, heads);

      await sut.append({ type: 'run.resumed', runId: 'run-1' });
      expect(sut.chain).not.toBe(first);
      expect(sut.stats).toMatchObject({ chains: 2, conflicts: 0, entries: 2 });
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 2, chains: 2 });
    } finally {
      await redis.del(keys.stream, keys.heads, keys.checkpoint);
    }
  });
});

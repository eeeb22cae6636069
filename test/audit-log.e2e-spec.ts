// The shared audit log: one hash chain per writer in one stream; verify() finds where a chain breaks.
import { Redis } from 'ioredis';
import { AuditLog, auditKeys, chainHash, LuaScript } from '@countersign/platform';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, type TestPrefixes } from './support/redis';

describe('AuditLog (real Redis)', () => {
  const used: TestPrefixes[] = [];
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await Promise.all(used.map((p) => deletePrefixedKeys(p)));
  });

  function freshPrefix(): string {
    const prefixes = uniquePrefixes('audit');
    used.push(prefixes);
    return prefixes.keyPrefix;
  }

  /** Two writers (as two processes would be), `perWriter` entries each, appended at once. */
  async function twoWriters(perWriter = 6) {
    const keyPrefix = freshPrefix();
    const a = new AuditLog(redis, keyPrefix, 'svc-a');
    const b = new AuditLog(redis, keyPrefix, 'svc-b');
    await Promise.all(
      [a, b].flatMap((w, i) =>
        Array.from({ length: perWriter }, (_, n) =>
          w.append({ type: 'tool.executed', runId: `run-${i}`, callId: `c-${i}-${n}` }),
        ),
      ),
    );
    const keys = auditKeys(keyPrefix);
    const rows = await redis.xrange(keys.stream, '-', '+');
    const ofChain = (chain: string) =>
      rows.filter(([, f]) => f[f.indexOf('chain') + 1] === chain).map(([id]) => id);
    return { keyPrefix, keys, a, b, rows, idsOfA: ofChain(a.chain), idsOfB: ofChain(b.chain) };
  }

  it('lets writers append at the same time without ever retrying, each on its own chain', async () => {
    const keyPrefix = freshPrefix();
    const connections = [0, 1].map(() => redis.duplicate());
    const writers = connections.map((c, i) => new AuditLog(c, keyPrefix, `svc-${i}`));
    await Promise.all(
      writers.flatMap((w, i) =>
        Array.from({ length: 450 }, (_, n) =>
          w.append({ type: 'tool.executed', runId: `run-${i}`, callId: `c-${i}-${n}` }),
        ),
      ),
    );
    connections.forEach((c) => c.disconnect());
    for (const w of writers) {
      expect(w.stats).toMatchObject({ entries: 450, conflicts: 0, chains: 1 });
      // The first append goes out alone, then batches of up to 200: one round trip each, none repeated.
      expect(w.stats.batches).toBeLessThanOrEqual(4);
    }
    const sut = new AuditLog(redis, keyPrefix, 'reader');
    await expect(sut.verify()).resolves.toEqual({ intact: true, entries: 900, chains: 2 });
    const heads = await redis.hgetall(auditKeys(keyPrefix).heads);
    expect(Object.keys(heads).sort()).toEqual(writers.map((w) => w.chain).sort());
    expect(writers[0].chain).toMatch(/^svc-0:[0-9a-f]{8}$/);
  });

  it('reads every entry with the hash of the previous entry of its chain', async () => {
    const { keyPrefix, a, b } = await twoWriters();
    const sut = new AuditLog(redis, keyPrefix, 'reader');
    const entries = await sut.read();
    expect(entries).toHaveLength(12);
    for (const chain of [a.chain, b.chain]) {
      const ofChain = entries.filter((e) => e.chain === chain);
      expect(ofChain).toHaveLength(6);
      ofChain.forEach((e, i) => {
        expect(e.prevHash).toBe(i === 0 ? '' : ofChain[i - 1].hash);
        const { id: _id, chain: _chain, prevHash, hash, ...body } = e;
        expect(hash).toBe(chainHash(prevHash, JSON.stringify(sortKeys(body))));
      });
    }
    expect(await sut.read({ callId: 'c-1-3' })).toEqual([
      expect.objectContaining({ runId: 'run-1', service: 'svc-b', chain: b.chain }),
    ]);
  });

  it('links filtered entries over the whole stream, not over the filtered ones', async () => {
    const sut = new AuditLog(redis, freshPrefix(), 'svc');
    for (const runId of ['run-1', 'run-2', 'run-1']) await sut.append({ type: 'run.parked', runId });
    const all = await sut.read();
    const run1 = await sut.read({ runId: 'run-1' });
    expect(run1.map((e) => e.prevHash)).toEqual([all[0].prevHash, all[1].hash]);
    expect(await sut.read({ runId: 'run-1', limit: 1 })).toEqual([all[2]]);
  });

  it('stores only the chain, the entry and its hash, and the service name once when it is the actor', async () => {
    const keyPrefix = freshPrefix();
    const sut = new AuditLog(redis, keyPrefix, 'agent-worker');
    await sut.append({
      type: 'run.parked',
      runId: 'run-1',
      actor: 'agent-worker',
      detail: { pending: ['c1'] },
    });
    await sut.append({ type: 'tool.executed', runId: 'run-1', callId: 'c1', actor: 'carol' });
    await sut.append({ type: 'tool.executed', runId: 'run-1', callId: 'c2' });
    const rows = await redis.xrange(auditKeys(keyPrefix).stream, '-', '+');
    for (const [, fields] of rows)
      expect(fields.filter((_, i) => i % 2 === 0)).toEqual(['chain', 'entry', 'hash']);
    const stored = rows.map(([, f]) => JSON.parse(f[3]) as Record<string, unknown>);
    expect(stored[0]).not.toHaveProperty('service');
    expect(stored[0]).toMatchObject({ actor: 'agent-worker' });
    expect(stored[1]).toMatchObject({ actor: 'carol', service: 'agent-worker' });
    expect(stored[2]).not.toHaveProperty('actor');

    const [parked, byCarol, auto] = await sut.read();
    expect(parked).toMatchObject({
      actor: 'agent-worker',
      service: 'agent-worker',
      detail: { pending: ['c1'] },
    });
    expect(byCarol).toMatchObject({ actor: 'carol', service: 'agent-worker' });
    expect(auto.service).toBe('agent-worker');
    expect(auto).not.toHaveProperty('actor');
  });

  it('starts a new chain when the process starts again', async () => {
    const keyPrefix = freshPrefix();
    const before = new AuditLog(redis, keyPrefix, 'svc');
    await before.append({ type: 'run.parked', runId: 'run-1' });
    const after = new AuditLog(redis, keyPrefix, 'svc');
    await after.append({ type: 'run.resumed', runId: 'run-1' });
    expect(after.chain).not.toBe(before.chain);
    const [, resumed] = await after.read();
    expect(resumed).toMatchObject({ chain: after.chain, prevHash: '' });
    await expect(after.verify()).resolves.toEqual({ intact: true, entries: 2, chains: 2 });
  });

  it('refuses a batch when its chain was extended by another process, and never forks the chain', async () => {
    const keyPrefix = freshPrefix();
    const keys = auditKeys(keyPrefix);
    const sut = new AuditLog(redis, keyPrefix, 'svc');
    await sut.append({ type: 'run.parked', runId: 'run-1' });
    const shared = sut.chain;
    // A second process that (by accident) uses the same chain ID, and extends it correctly.
    const head = (await redis.hget(keys.heads, shared))!;
    const json = JSON.stringify({
      at: new Date().toISOString(),
      detail: {},
      service: 'svc',
      type: 'run.parked',
    });
    const script = LuaScript.load(`${__dirname}/../libs/platform/src`, 'audit-append-2.lua');
    await script.run(redis, [keys.stream, keys.heads], [shared, head, chainHash(head, json), json]);

    await expect(sut.append({ type: 'run.resumed', runId: 'run-1' })).rejects.toThrow(
      `audit chain ${shared}: its head in Redis is not this writer's last entry`,
    );
    expect(sut.stats).toMatchObject({ conflicts: 1, chains: 2 });
    expect(sut.chain).not.toBe(shared);
    await sut.append({ type: 'run.resumed', runId: 'run-1' });
    await expect(sut.verify()).resolves.toEqual({ intact: true, entries: 3, chains: 2 });
  });

  describe('detects tampering', () => {
    type Setup = Awaited<ReturnType<typeof twoWriters>>;
    const cases: [string, (s: Setup) => Promise<string>, RegExp][] = [
      [
        'an edited entry',
        async ({ keys, idsOfA }) => {
          await rewriteStream(keys.stream, (id, f) =>
            id === idsOfA[2] ? f.map((v) => v.replace('tool.executed', 'tool.denied')) : f,
          );
          return idsOfA[2];
        },
        /entry does not match its hash: it was changed, or the entry before it in chain svc-a:\w+ is missing/,
      ],
      [
        'a deleted entry in the middle of a chain',
        async ({ keys, idsOfA }) => {
          await redis.xdel(keys.stream, idsOfA[2]);
          return idsOfA[3];
        },
        /entry does not match its hash: it was changed, or the entry before it in chain svc-a:\w+ is missing/,
      ],
      [
        'a deleted first entry of a chain',
        async ({ keys, idsOfB }) => {
          await redis.xdel(keys.stream, idsOfB[0]);
          return idsOfB[1];
        },
        /the entry before it in chain svc-b:\w+ is missing/,
      ],
      [
        'a deleted newest entry of one chain',
        async ({ keys, idsOfA }) => {
          await redis.xdel(keys.stream, idsOfA.at(-1)!);
          return idsOfA.at(-2)!;
        },
        /^newest entries of chain svc-a:\w+ are missing$/,
      ],
      [
        'every entry of one chain deleted',
        async ({ keys, idsOfB }) => {
          await redis.xdel(keys.stream, ...idsOfB);
          return '-';
        },
        /^chain svc-b:\w+ has no entries \(all of them are missing\)$/,
      ],
      [
        'a deleted head',
        async ({ keys, a, idsOfA }) => {
          await redis.hdel(keys.heads, a.chain);
          return idsOfA.at(-1)!;
        },
        /^chain svc-a:\w+ has no head \(its head was deleted\)$/,
      ],
      [
        'an entry in the old format (with `prev`, without `chain`)',
        async ({ keys }) => {
          const id = await redis.xadd(
            keys.stream,
            '*',
            'entry',
            '{}',
            'prev',
            '',
            'hash',
            chainHash('', '{}'),
          );
          return id!;
        },
        /^not an entry of a writer chain/,
      ],
    ];

    it.each(cases)('%s', async (_, tamper, reason) => {
      const setup = await twoWriters();
      const sut = new AuditLog(redis, setup.keyPrefix, 'reader');
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, chains: 2 });
      const brokenId = await tamper(setup);
      const check = await sut.verify();
      expect(check).toMatchObject({ intact: false, chains: 2, brokenAt: { id: brokenId } });
      expect(check.brokenAt?.reason).toMatch(reason);
    });
  });

  /** A stream entry cannot be edited in place; rebuild the stream with the same IDs, as an attacker could. */
  async function rewriteStream(
    stream: string,
    edit: (id: string, fields: string[]) => string[],
  ): Promise<void> {
    const rows = await redis.xrange(stream, '-', '+');
    const tx = redis.multi().del(stream);
    for (const [id, fields] of rows) tx.xadd(stream, id, ...edit(id, fields));
    await tx.exec();
  }
});

function sortKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : 1)));
}

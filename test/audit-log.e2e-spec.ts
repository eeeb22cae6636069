// The shared audit log: one HMAC chain per writer in one stream; verify() finds where a chain breaks.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { LuaScript } from '@countersign/platform';
import {
  AUDIT_CHAIN_IDLE_MS,
  AuditKey,
  AuditKeyring,
  AuditLog,
  auditKeys,
  MIN_AUDIT_RETENTION_MS,
} from '@countersign/audit';
import { TEST_AUDIT_SECRET, testAuditKeyring } from './support/audit';
import { freshKeyPrefixes, TEST_REDIS_URL } from './support/redis';

const keyring = testAuditKeyring();
const link = (chain: string, prev: string, json: string) => keyring.current.entryMac(chain, prev, json);

describe('AuditLog (real Redis)', () => {
  const prefixes = freshKeyPrefixes('audit');
  const freshPrefix = () => prefixes.fresh();
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis.disconnect();
    await prefixes.deleteAll();
  });

  /** Two writers (as two processes would be), `perWriter` entries each, appended at once. */
  async function twoWriters(perWriter = 6) {
    const keyPrefix = freshPrefix();
    const a = new AuditLog(redis, keyPrefix, 'svc-a', keyring);
    const b = new AuditLog(redis, keyPrefix, 'svc-b', keyring);
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
    const writers = connections.map((c, i) => new AuditLog(c, keyPrefix, `svc-${i}`, keyring));
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
    const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
    await expect(sut.verify()).resolves.toEqual({
      intact: true,
      entries: 900,
      chains: 2,
      keys: [keyring.current.id],
    });
    const heads = await redis.hgetall(auditKeys(keyPrefix).heads);
    expect(Object.keys(heads).sort()).toEqual(writers.map((w) => w.chain).sort());
    expect(writers[0].chain).toBe(`svc-0:${writers[0].chain.split(':')[1]}:${keyring.current.id}`);
    expect(writers[0].chain).toMatch(/^svc-0:[0-9a-f]{8}:[0-9a-f]{8}$/);
  });

  it('reads every entry with the link of the previous entry of its chain', async () => {
    const { keyPrefix, a, b } = await twoWriters();
    const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
    const entries = await sut.read();
    expect(entries).toHaveLength(12);
    for (const chain of [a.chain, b.chain]) {
      const ofChain = entries.filter((e) => e.chain === chain);
      expect(ofChain).toHaveLength(6);
      ofChain.forEach((e, i) => {
        expect(e.prevHash).toBe(i === 0 ? '' : ofChain[i - 1].hash);
        const { id: _id, chain, prevHash, hash, ...body } = e;
        expect(hash).toBe(link(chain, prevHash!, JSON.stringify(sortKeys(body))));
      });
    }
    expect(await sut.read({ callId: 'c-1-3' })).toEqual([
      expect.objectContaining({ runId: 'run-1', service: 'svc-b', chain: b.chain }),
    ]);
  });

  it('links filtered entries over the whole stream, not over the filtered ones', async () => {
    const sut = new AuditLog(redis, freshPrefix(), 'svc', keyring);
    for (const runId of ['run-1', 'run-2', 'run-1']) await sut.append({ type: 'run.parked', runId });
    const all = await sut.read();
    const run1 = await sut.read({ runId: 'run-1' });
    expect(run1.map((e) => e.prevHash)).toEqual([all[0].prevHash, all[1].hash]);
    expect(await sut.read({ runId: 'run-1', limit: 1 })).toEqual([all[2]]);
  });

  it('stores only the chain, the entry and its hash, and the service name once when it is the actor', async () => {
    const keyPrefix = freshPrefix();
    const sut = new AuditLog(redis, keyPrefix, 'agent-worker', keyring);
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
    const before = new AuditLog(redis, keyPrefix, 'svc', keyring);
    await before.append({ type: 'run.parked', runId: 'run-1' });
    const after = new AuditLog(redis, keyPrefix, 'svc', keyring);
    await after.append({ type: 'run.resumed', runId: 'run-1' });
    expect(after.chain).not.toBe(before.chain);
    const [, resumed] = await after.read();
    expect(resumed).toMatchObject({ chain: after.chain, prevHash: '' });
    await expect(after.verify()).resolves.toMatchObject({ intact: true, entries: 2, chains: 2 });
  });

  it('refuses a batch when its chain was extended by another process, and never forks the chain', async () => {
    const keyPrefix = freshPrefix();
    const keys = auditKeys(keyPrefix);
    const sut = new AuditLog(redis, keyPrefix, 'svc', keyring);
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
    const script = LuaScript.load(`${__dirname}/../libs/audit/src`, 'audit-append-2.lua');
    await script.run(redis, [keys.stream, keys.heads], [shared, head, link(shared, head, json), json]);

    await expect(sut.append({ type: 'run.resumed', runId: 'run-1' })).rejects.toThrow(
      `audit chain ${shared}: its head in Redis is not this writer's last entry`,
    );
    expect(sut.stats).toMatchObject({ conflicts: 1, chains: 2 });
    expect(sut.chain).not.toBe(shared);
    await sut.append({ type: 'run.resumed', runId: 'run-1' });
    await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 3, chains: 2 });
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
        /entry does not match its hash: it was changed, the entry before it in chain svc-a:[\w:]+ is missing/,
      ],
      [
        'a deleted entry in the middle of a chain',
        async ({ keys, idsOfA }) => {
          await redis.xdel(keys.stream, idsOfA[2]);
          return idsOfA[3];
        },
        /entry does not match its hash: it was changed, the entry before it in chain svc-a:[\w:]+ is missing/,
      ],
      [
        'a deleted first entry of a chain',
        async ({ keys, idsOfB }) => {
          await redis.xdel(keys.stream, idsOfB[0]);
          return idsOfB[1];
        },
        /the entry before it in chain svc-b:[\w:]+ is missing/,
      ],
      [
        'a deleted newest entry of one chain',
        async ({ keys, idsOfA }) => {
          await redis.xdel(keys.stream, idsOfA.at(-1)!);
          return idsOfA.at(-2)!;
        },
        /^newest entries of chain svc-a:[\w:]+ are missing$/,
      ],
      [
        'every entry of one chain deleted',
        async ({ keys, idsOfB }) => {
          await redis.xdel(keys.stream, ...idsOfB);
          return '-';
        },
        /^chain svc-b:[\w:]+ has no entries \(all of them are missing\)$/,
      ],
      [
        'a deleted head',
        async ({ keys, a, idsOfA }) => {
          await redis.hdel(keys.heads, a.chain);
          return idsOfA.at(-1)!;
        },
        /^chain svc-a:[\w:]+ has no head \(its head was deleted\)$/,
      ],
      [
        'an entry in the old format (with `prev`, without `chain`)',
        async ({ keys }) => {
          const id = await redis.xadd(keys.stream, '*', 'entry', '{}', 'prev', '', 'hash', sha256('\n{}'));
          return id!;
        },
        /^not an entry of a writer chain/,
      ],
    ];

    it.each(cases)('%s', async (_, tamper, reason) => {
      const setup = await twoWriters();
      const sut = new AuditLog(redis, setup.keyPrefix, 'reader', keyring);
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, chains: 2 });
      const brokenId = await tamper(setup);
      const check = await sut.verify();
      expect(check).toMatchObject({ intact: false, chains: 2, brokenAt: { id: brokenId } });
      expect(check.brokenAt?.reason).toMatch(reason);
    });
  });

  describe('keyed chains', () => {
    /** Writer A's chain without its third entry, every later link recomputed with `relink`, its head moved along. */
    async function dropAndRelink(setup: Awaited<ReturnType<typeof twoWriters>>, relink: AuditKey) {
      const { keys, a, idsOfA } = setup;
      let prev = '';
      await rewriteStream(keys.stream, (id, fields) => {
        if (id === idsOfA[2]) return [];
        if (fields[1] !== a.chain) return fields;
        if (idsOfA.indexOf(id) > 2) fields[5] = relink.entryMac(a.chain, prev, fields[3]);
        prev = fields[5];
        return fields;
      });
      await redis.hset(keys.heads, a.chain, prev);
      return idsOfA[3];
    }

    it('refuses a chain rewritten without the key: an entry removed and the rest linked again', async () => {
      const setup = await twoWriters();
      const next = await dropAndRelink(setup, new AuditKey('a-guessed-audit-signing-secret-0123456789'));
      const check = await new AuditLog(redis, setup.keyPrefix, 'reader', keyring).verify();
      expect(check).toMatchObject({ intact: false, brokenAt: { id: next } });
      expect(check.brokenAt?.reason).toMatch(/or it was written without the key/);
    });

    it('cannot tell the same rewrite from the real chain when it is made with the key (the key is what protects it)', async () => {
      const setup = await twoWriters();
      await dropAndRelink(setup, keyring.current);
      const check = await new AuditLog(redis, setup.keyPrefix, 'reader', keyring).verify();
      expect(check).toMatchObject({ intact: true, entries: 11 });
    });

    it('verifies chains of a previous secret while it is configured, and names its key ID', async () => {
      const keyPrefix = freshPrefix();
      const previous = `previous-${TEST_AUDIT_SECRET}`;
      const before = new AuditLog(redis, keyPrefix, 'svc', new AuditKeyring(previous));
      await before.append({ type: 'run.parked', runId: 'run-1' });
      const after = new AuditLog(redis, keyPrefix, 'svc', testAuditKeyring([previous]));
      await after.append({ type: 'run.resumed', runId: 'run-1' });
      const oldId = new AuditKey(previous).id;
      expect(before.chain.endsWith(`:${oldId}`)).toBe(true);
      expect(after.chain.endsWith(`:${keyring.current.id}`)).toBe(true);

      await expect(after.verify()).resolves.toEqual({
        intact: true,
        entries: 2,
        chains: 2,
        keys: [oldId, keyring.current.id].sort(),
      });
      const withoutPrevious = await new AuditLog(redis, keyPrefix, 'reader', keyring).verify();
      expect(withoutPrevious).toMatchObject({ intact: false });
      expect(withoutPrevious.brokenAt?.reason).toBe(
        `chain ${before.chain} is signed with key ${oldId}, which is not configured (AUDIT_SIGNING_SECRET, AUDIT_SIGNING_PREVIOUS_SECRETS)`,
      );
    });

    it('starts a new chain after an hour without appends, and keeps its chain while it appends', async () => {
      let now = 1_000_000;
      const sut = new AuditLog(redis, freshPrefix(), 'svc', keyring, { now: () => now });
      await sut.append({ type: 'run.parked', runId: 'run-1' });
      const first = sut.chain;
      now += AUDIT_CHAIN_IDLE_MS;
      await sut.append({ type: 'run.resumed', runId: 'run-1' });
      expect(sut.chain).toBe(first);
      now += AUDIT_CHAIN_IDLE_MS + 1;
      await sut.append({ type: 'tool.executed', runId: 'run-1' });
      expect(sut.chain).not.toBe(first);
      expect(sut.stats).toMatchObject({ chains: 2, entries: 3, conflicts: 0 });
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 3, chains: 2 });
    });
  });

  describe('reading a page', () => {
    /** `count` entries of one writer, callId c-0 … c-<count-1>, in order. */
    async function written(count: number, service = 'svc', keyPrefix = freshPrefix()) {
      const writer = new AuditLog(redis, keyPrefix, service, keyring);
      for (let n = 0; n < count; n++)
        await writer.append({ type: 'tool.executed', runId: `run-${n % 2}`, callId: `c-${n}` });
      return { keyPrefix, writer, sut: new AuditLog(redis, keyPrefix, 'reader', keyring) };
    }

    it('reads newest first, a page at a time, each page oldest first, with the older pages behind a cursor', async () => {
      const { sut } = await written(25);
      const pages: string[][] = [];
      let before: string | undefined;
      do {
        const page = await sut.readPage({ limit: 10, before });
        pages.push(page.entries.map((e) => e.callId!));
        before = page.next;
      } while (before && pages.length < 10);
      const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `c-${from + i}`);
      expect(pages).toEqual([ids(15, 25), ids(5, 15), ids(0, 5)]);
    });

    it('gives every entry the link of the previous entry of its chain, across page ends', async () => {
      const { sut } = await written(12);
      const all = await sut.read();
      const older = await sut.readPage({ limit: 5, before: all[7].id });
      expect(older.entries.map((e) => e.callId)).toEqual(['c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
      expect(older.entries.map((e) => e.prevHash)).toEqual(all.slice(1, 6).map((e) => e.hash));
      expect(all[0].prevHash).toBe('');
    });

    it('filters by run and call, and by what the caller may see, and says when there is nothing older', async () => {
      const { sut } = await written(10);
      const run1 = await sut.readPage({ runId: 'run-1', limit: 100 });
      expect(run1.entries.map((e) => e.callId)).toEqual(['c-1', 'c-3', 'c-5', 'c-7', 'c-9']);
      expect(run1.next).toBeUndefined();
      const one = await sut.readPage({ callId: 'c-4', limit: 100 });
      expect(one.entries.map((e) => e.callId)).toEqual(['c-4']);
      const visible = await sut.readPage({
        limit: 100,
        visible: async (e) => ['c-2', 'c-8'].includes(e.callId ?? ''),
      });
      expect(visible.entries.map((e) => e.callId)).toEqual(['c-2', 'c-8']);
    });

    it('reads at most its scan limit, and hands on a cursor where it stopped', async () => {
      const { sut } = await written(30);
      const first = await sut.readPage({ callId: 'c-3', limit: 100, scanLimit: 10 });
      expect(first.entries).toEqual([]);
      expect(first.next).toBeDefined();
      let page = first;
      const found: string[] = [];
      for (let n = 0; page.next && n < 10; n++) {
        page = await sut.readPage({ callId: 'c-3', limit: 100, scanLimit: 10, before: page.next });
        found.push(...page.entries.map((e) => e.callId!));
      }
      expect(found).toEqual(['c-3']);
      expect(page.next).toBeUndefined();
    });

    it('leaves out the link of an entry whose previous entry lies beyond the scan limit', async () => {
      const keyPrefix = freshPrefix();
      const quiet = new AuditLog(redis, keyPrefix, 'quiet', keyring);
      await quiet.append({ type: 'run.parked', runId: 'run-q' });
      await written(20, 'busy', keyPrefix);
      await quiet.append({ type: 'run.resumed', runId: 'run-q' });
      const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
      const [resumed] = (await sut.readPage({ runId: 'run-q', limit: 1, scanLimit: 10 })).entries;
      expect(resumed).toMatchObject({ type: 'run.resumed' });
      expect(resumed).not.toHaveProperty('prevHash');
      const [, withLink] = (await sut.readPage({ runId: 'run-q', limit: 2 })).entries;
      expect(withLink.prevHash).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('retention', () => {
    /** Waits until Redis's clock is past `ms`, so the next entry's ID is in a later millisecond (a state, not a delay). */
    async function pastMillisecond(ms: number): Promise<void> {
      for (;;) {
        const [seconds, micros] = await redis.time();
        if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > ms) return;
      }
    }
    const msOf = (id: string) => Number(id.split('-')[0]);

    /**
     * B writes 4 entries and is done; A writes 4, then (in a later millisecond) 3 more. Trimming at `cutoff` takes
     * everything before A's fifth entry: B's chain whole, and A's first 4.
     */
    async function trimmable(writerKeys = keyring) {
      const keyPrefix = freshPrefix();
      const keys = auditKeys(keyPrefix);
      const a = new AuditLog(redis, keyPrefix, 'svc-a', writerKeys);
      const b = new AuditLog(redis, keyPrefix, 'svc-b', writerKeys);
      const ids: string[] = [];
      for (let n = 0; n < 4; n++) ids.push(await a.append({ type: 'run.parked', runId: `a-${n}` }));
      for (let n = 0; n < 4; n++) await b.append({ type: 'run.parked', runId: `b-${n}` });
      const last = (await redis.xrevrange(keys.stream, '+', '-', 'COUNT', 1))[0][0];
      await pastMillisecond(msOf(last));
      for (let n = 4; n < 7; n++) ids.push(await a.append({ type: 'run.parked', runId: `a-${n}` }));
      const cutoff = msOf(ids[4]);
      const trim = (sut: AuditLog) => sut.trim(MIN_AUDIT_RETENTION_MS, cutoff + MIN_AUDIT_RETENTION_MS);
      return { keyPrefix, keys, a, b, ids, last, trim };
    }

    it('trims entries past the retention behind a signed checkpoint, and what is left still verifies', async () => {
      const { keyPrefix, keys, a, b, ids, last, trim } = await trimmable();
      const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
      const [fourth] = (await sut.readPage({ runId: 'a-3', limit: 1 })).entries;

      await expect(trim(sut)).resolves.toEqual({ status: 'trimmed', trimmed: 8, more: false });

      expect((await redis.xrange(keys.stream, '-', '+')).map(([id]) => id)).toEqual(ids.slice(4));
      // B was trimmed whole: its head went with it. A goes on from the checkpoint.
      expect(Object.keys(await redis.hgetall(keys.heads))).toEqual([a.chain]);
      await expect(sut.verify()).resolves.toEqual({
        intact: true,
        entries: 3,
        chains: 1,
        keys: [keyring.current.id],
        checkpoint: { upTo: last, at: expect.any(String), trimmed: 8 },
      });
      const [fifth] = (await sut.readPage({ runId: 'a-4', limit: 1 })).entries;
      expect(fifth.prevHash).toBe(fourth.hash);
      expect(b.chain).not.toBe(a.chain);

      await a.append({ type: 'run.resumed', runId: 'a-7' });
      await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 4 });
      await expect(trim(sut)).resolves.toEqual({ status: 'trimmed', trimmed: 0, more: false });
    });

    it('trims once when replicas trim at the same time', async () => {
      const { keyPrefix, trim } = await trimmable();
      const replicas = [0, 1, 2].map(() => new AuditLog(redis, keyPrefix, 'approval-service', keyring));
      const results = await Promise.all(replicas.map(trim));
      expect(results.reduce((sum, r) => sum + r.trimmed, 0)).toBe(8);
      await expect(replicas[0].verify()).resolves.toMatchObject({
        intact: true,
        entries: 3,
        checkpoint: { trimmed: 8 },
      });
    });

    it('refuses a retention shorter than a day', async () => {
      const sut = new AuditLog(redis, freshPrefix(), 'svc', keyring);
      await expect(sut.trim(MIN_AUDIT_RETENTION_MS - 1)).rejects.toThrow(RangeError);
    });

    it('stops at an entry that does not verify: the evidence stays, and so does the break', async () => {
      const { keyPrefix, keys, ids, trim } = await trimmable();
      await rewriteStream(keys.stream, (id, f) =>
        id === ids[2] ? f.map((v) => v.replace('a-2', 'a-x')) : f,
      );
      const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
      const result = await trim(sut);
      expect(result).toMatchObject({ status: 'refused', trimmed: 2, at: ids[2] });
      expect((await redis.xrange(keys.stream, '-', '+'))[0][0]).toBe(ids[2]);
      await expect(sut.verify()).resolves.toMatchObject({ intact: false, brokenAt: { id: ids[2] } });
    });

    it('signs the checkpoint again with the current key, so a previous secret can be retired', async () => {
      const previous = new AuditKeyring(`previous-${TEST_AUDIT_SECRET}`);
      const rotated = testAuditKeyring([`previous-${TEST_AUDIT_SECRET}`]);
      const { keyPrefix, keys, ids, trim } = await trimmable(previous);
      await trim(new AuditLog(redis, keyPrefix, 'svc', previous));
      const keyOf = async () => (JSON.parse((await redis.get(keys.checkpoint))!) as { key: string }).key;
      expect(await keyOf()).toBe(previous.current.id);

      // After the rotation: nothing new to trim, but the checkpoint is signed again.
      const sut = new AuditLog(redis, keyPrefix, 'svc', rotated);
      await expect(trim(sut)).resolves.toEqual({ status: 'trimmed', trimmed: 0, more: false });
      expect(await keyOf()).toBe(keyring.current.id);
      await expect(sut.verify()).resolves.toMatchObject({
        intact: true,
        keys: [previous.current.id, keyring.current.id].sort(),
      });

      // Once the previous key's last chain is past the retention too, the current secret alone verifies the log.
      await sut.trim(MIN_AUDIT_RETENTION_MS, msOf(ids[6]) + 1 + MIN_AUDIT_RETENTION_MS);
      await expect(new AuditLog(redis, keyPrefix, 'reader', keyring).verify()).resolves.toEqual({
        intact: true,
        entries: 0,
        chains: 0,
        keys: [keyring.current.id],
        checkpoint: { upTo: ids[6], at: expect.any(String), trimmed: 11 },
      });
    });

    describe('detects tampering after a trim', () => {
      type Trimmed = Awaited<ReturnType<typeof trimmable>>;
      const cases: [string, (t: Trimmed) => Promise<string>, RegExp][] = [
        [
          'a checkpoint changed',
          async ({ keys }) => {
            const stored = JSON.parse((await redis.get(keys.checkpoint))!) as { upTo: string };
            await redis.set(keys.checkpoint, JSON.stringify({ ...stored, upTo: '1-0' }));
            return '-';
          },
          /^the retention checkpoint does not match its signature/,
        ],
        [
          'a checkpoint deleted',
          async ({ keys, ids }) => {
            await redis.del(keys.checkpoint);
            return ids[4];
          },
          /^entry does not match its hash/,
        ],
        [
          'a trimmed entry put back',
          async ({ keys, ids }) => {
            const rows = await redis.xrange(keys.stream, '-', '+');
            const tx = redis
              .multi()
              .del(keys.stream)
              .xadd(keys.stream, ids[3], 'chain', 'x', 'entry', '{}', 'hash', 'y');
            for (const [id, fields] of rows) tx.xadd(keys.stream, id, ...fields);
            await tx.exec();
            return ids[3];
          },
          /^entry is not newer than the retention checkpoint/,
        ],
        [
          'the rest of a chain the checkpoint goes on with deleted, head and all',
          async ({ keys, a, ids }) => {
            await redis.xdel(keys.stream, ...ids.slice(4));
            await redis.hdel(keys.heads, a.chain);
            return '-';
          },
          /goes on after the retention checkpoint, but has neither entries nor a head/,
        ],
        [
          'the newest entries of a chain deleted, past the checkpoint',
          async ({ keys, ids }) => {
            await redis.xdel(keys.stream, ...ids.slice(4));
            return '-';
          },
          /newest entries of chain svc-a:[\w:]+ are missing \(none is left after the checkpoint\)/,
        ],
      ];

      it.each(cases)('%s', async (_, tamper, reason) => {
        const trimmed = await trimmable();
        const sut = new AuditLog(redis, trimmed.keyPrefix, 'reader', keyring);
        await trimmed.trim(sut);
        await expect(sut.verify()).resolves.toMatchObject({ intact: true });
        const brokenId = await tamper(trimmed);
        const check = await sut.verify();
        expect(check).toMatchObject({ intact: false, brokenAt: { id: brokenId } });
        expect(check.brokenAt?.reason).toMatch(reason);
      });

      it('an older checkpoint put back', async () => {
        const { keyPrefix, keys, a, ids, trim } = await trimmable();
        const sut = new AuditLog(redis, keyPrefix, 'reader', keyring);
        await trim(sut);
        const older = (await redis.get(keys.checkpoint))!;
        // Later, A's next entries are trimmed too.
        await pastMillisecond(msOf(ids[6]));
        const later = await a.append({ type: 'run.resumed', runId: 'a-7' });
        await sut.trim(MIN_AUDIT_RETENTION_MS, msOf(later) + MIN_AUDIT_RETENTION_MS);
        await expect(sut.verify()).resolves.toMatchObject({ intact: true, entries: 1 });
        await redis.set(keys.checkpoint, older);
        await expect(sut.verify()).resolves.toMatchObject({ intact: false, brokenAt: { id: later } });
      });
    });
  });

  /**
   * A stream entry cannot be edited in place; rebuild the stream with the same IDs, as an attacker could. `edit`
   * returns an entry's fields, or none to leave it out.
   */
  async function rewriteStream(
    stream: string,
    edit: (id: string, fields: string[]) => string[],
  ): Promise<void> {
    const rows = await redis.xrange(stream, '-', '+');
    const tx = redis.multi().del(stream);
    for (const [id, fields] of rows) {
      const edited = edit(id, fields);
      if (edited.length > 0) tx.xadd(stream, id, ...edited);
    }
    await tx.exec();
  }
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function sortKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : 1)));
}

// The gateway's call records (apps/mcp-gateway/src/approvals/call-record-store.ts and its scripts) against a real Redis:
// identical calls share one record, a record starts over when its tool changed or its approval is gone, and its call
// state is the call ledger's: one runner claims it under its token, a runner whose heartbeat went stale is interrupted
// and the run taken over, and only the runner that holds the claim stores the outcome, once.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallState, ledgerFields } from '@countersign/call-ledger';
import { createRedis, type RedisClient } from '@countersign/platform';
import { CallRecordStore } from '../../apps/mcp-gateway/src/approvals/call-record-store';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from '../support/redis';

const prefixes = uniquePrefixes('gateway-records');
const LEDGER = ledgerFields('');
const HOUR = 3_600_000;
const result = (text: string): CallToolResult => ({ content: [{ type: 'text', text }] });

describe('the gateway call records', () => {
  let redis: RedisClient;
  let sut: CallRecordStore;
  let n = 0;
  let key: string;

  const open = (callId: string, more: { definitionHash?: string; replace?: string } = {}) =>
    sut.open(key, { callId, runId: 'mcp-alice', definitionHash: 'def-1', ttlMs: HOUR, ...more });
  /** A record waiting for its decision, opened by `callId`. */
  const waiting = async (callId = 'c1') => (await open(callId)).record;

  beforeAll(() => {
    redis = createRedis({ url: TEST_REDIS_URL });
    sut = new CallRecordStore(redis, prefixes.keyPrefix);
  });
  beforeEach(() => {
    key = sut.keyOf('alice', `fingerprint-${++n}`);
  });
  afterAll(async () => {
    await deletePrefixedKeys(prefixes);
    redis.disconnect();
  });

  describe('opening', () => {
    it('gives identical calls one record: the second open finds the first, pending in the ledger', async () => {
      const first = await open('c1');
      const second = await open('c2');
      expect(first.created).toBe(true);
      expect(second).toMatchObject({ created: false, record: { callId: 'c1', state: CallState.Pending } });
      expect(await redis.hget(key, LEDGER.state)).toBe('pending');
    });

    it('keeps principals apart: the same fingerprint of another principal is another record', () => {
      expect(sut.keyOf('bob', 'fp')).not.toBe(sut.keyOf('alice', 'fp'));
    });

    it('starts a waiting record over when the tool changed, or when its approval is gone', async () => {
      await open('c1');
      expect(await open('c2', { definitionHash: 'def-2' })).toMatchObject({
        created: true,
        record: { callId: 'c2', definitionHash: 'def-2', state: CallState.Pending },
      });
      expect((await open('c3', { definitionHash: 'def-2', replace: 'c1' })).created).toBe(false);
      expect(await open('c4', { definitionHash: 'def-2', replace: 'c2' })).toMatchObject({
        created: true,
        record: { callId: 'c4' },
      });
    });

    it('never starts a record over once it runs or ran: identical calls get its outcome', async () => {
      const record = await waiting();
      await sut.startRun(record, 't1', HOUR);
      expect((await open('c2', { definitionHash: 'def-2', replace: 'c1' })).created).toBe(false);
      await sut.complete(record, 't1', { state: CallState.Done, result: result('ran'), ttlMs: HOUR });
      expect(await open('c3', { definitionHash: 'def-2', replace: 'c1' })).toMatchObject({
        created: false,
        record: { callId: 'c1', state: CallState.Done, result: result('ran') },
      });
    });

    it('replaces a record without a call state whole', async () => {
      await redis.hset(key, 'callId', 'old', 'approvalId', 'a-old', 'state', 'running');
      const { created, record } = await open('c1');
      expect(created).toBe(true);
      expect(record).toMatchObject({ callId: 'c1', state: CallState.Pending });
      expect(record.approvalId).toBeUndefined();
      expect(await redis.hget(key, 'state')).toBeNull();
    });
  });

  describe('running', () => {
    it('lets one runner claim the approved call; an identical request finds it executing', async () => {
      const record = await waiting();
      expect(await sut.startRun(record, 't1', HOUR)).toEqual({ started: true });
      expect(await sut.startRun(record, 't2', HOUR)).toEqual({ started: false, state: CallState.Executing });
      expect(await redis.hmget(key, LEDGER.state, LEDGER.token)).toEqual(['executing', 't1']);
      expect(Number(await redis.hget(key, LEDGER.heartbeat))).toBeGreaterThan(0);
    });

    it('takes over a runner whose heartbeat went stale; only the new runner stores the outcome', async () => {
      const record = await waiting();
      await sut.startRun(record, 'dead', HOUR);
      await redis.hset(key, LEDGER.heartbeat, '1'); // its gateway died long ago
      expect(await sut.startRun(record, 'next', HOUR)).toEqual({ started: true });
      expect(await redis.hget(key, LEDGER.token)).toBe('next');

      const late = await sut.complete(record, 'dead', {
        state: CallState.Done,
        result: result('late'),
        ttlMs: HOUR,
      });
      expect(late).toEqual({ settled: false, found: CallState.Executing });
      const own = await sut.complete(record, 'next', {
        state: CallState.Done,
        result: result('ran'),
        ttlMs: HOUR,
      });
      expect(own).toEqual({ settled: true });
      expect(await sut.get(key)).toMatchObject({ state: CallState.Done, result: result('ran') });
      expect(await redis.hmget(key, LEDGER.token, LEDGER.heartbeat)).toEqual([null, null]);
    });

    it('does not take over a runner whose heartbeat is fresh', async () => {
      const record = await waiting();
      await sut.startRun(record, 't1', 60_000);
      expect(await sut.startRun(record, 't2', 60_000)).toEqual({
        started: false,
        state: CallState.Executing,
      });
      expect(await redis.hget(key, LEDGER.token)).toBe('t1');
    });

    it('starts nothing for a record that settled, or that started over meanwhile', async () => {
      const record = await waiting();
      await sut.refuse(record, { result: result('denied'), ttlMs: HOUR });
      expect(await sut.startRun(record, 't1', HOUR)).toEqual({ started: false, state: CallState.Done });

      key = sut.keyOf('alice', `fingerprint-${++n}`);
      const gone = await waiting('c1');
      await open('c2', { definitionHash: 'def-2' });
      expect(await sut.startRun(gone, 't1', HOUR)).toEqual({ started: false, state: 'gone' });
      expect(await sut.recordApproval(gone, { approvalId: 'a', expiresAt: 'x', inboxUrl: 'u' }, HOUR)).toBe(
        false,
      );
    });
  });

  describe('settling', () => {
    it('stores the outcome once: a second one under the same token is refused', async () => {
      const record = await waiting();
      await sut.startRun(record, 't1', HOUR);
      await sut.complete(record, 't1', { state: CallState.Done, result: result('first'), ttlMs: HOUR });
      expect(
        await sut.complete(record, 't1', { state: CallState.Done, result: result('second'), ttlMs: HOUR }),
      ).toEqual({ settled: false, found: CallState.Done });
      expect((await sut.get(key))?.result).toEqual(result('first'));
    });

    it('ends a claimed run refused when its approval no longer held', async () => {
      const record = await waiting();
      await sut.startRun(record, 't1', HOUR);
      await sut.complete(record, 't1', { state: CallState.Refused, result: result('expired'), ttlMs: HOUR });
      expect(await sut.get(key)).toMatchObject({ state: CallState.Refused, result: result('expired') });
    });

    it('settles a refused decision as done (it never ran), but never a call that runs', async () => {
      const record = await waiting();
      expect(await sut.refuse(record, { result: result('denied'), ttlMs: 120_000 })).toEqual({
        settled: true,
      });
      expect(await sut.get(key)).toMatchObject({ state: CallState.Done, result: result('denied') });
      expect(await redis.pttl(key)).toBeGreaterThan(110_000);
      expect(await redis.pttl(key)).toBeLessThanOrEqual(120_000);

      key = sut.keyOf('alice', `fingerprint-${++n}`);
      const running = await waiting();
      await sut.startRun(running, 't1', HOUR);
      expect(await sut.refuse(running, { result: result('denied'), ttlMs: HOUR })).toEqual({
        settled: false,
        found: CallState.Executing,
      });
    });

    it('stores nothing for a record that started over meanwhile', async () => {
      const record = await waiting('c1');
      await open('c2', { replace: 'c1' });
      expect(await sut.refuse(record, { result: result('denied'), ttlMs: HOUR })).toEqual({
        settled: false,
        found: 'gone',
      });
      expect(await sut.get(key)).toMatchObject({ callId: 'c2', state: CallState.Pending });
    });
  });
});

// The run scripts (apps/agent-worker/src/runs/lua) against a real Redis: who may decide, resume and
// move a call, and what a stale, duplicated or foreign message gets.
import { Redis } from 'ioredis';
import { RunStore } from '../apps/agent-worker/src/runs/run-store';
import { CallState, type FrontierCall, type StoredDecision } from '../apps/agent-worker/src/runs/run-state';
import {
  ExecutionLostError,
  OwnershipLostError,
  WrongCallStateError,
} from '../apps/agent-worker/src/runs/run-store.errors';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

const prefixes = uniquePrefixes('runstore');
const redis = new Redis(TEST_REDIS_URL);
const sut = new RunStore(redis, prefixes.keyPrefix, 60);
afterAll(async () => {
  await redis.quit();
  await deletePrefixedKeys(prefixes);
});

const FP = 'a'.repeat(64);
const starter = { jobId: 'run-r', token: 't0' };
const approve: StoredDecision = {
  decision: 'approve',
  decidedBy: 'person',
  approvers: ['bob'],
  fingerprint: FP,
  decidedAt: new Date().toISOString(),
};
const pending = (id: string, i: number): FrontierCall => ({
  state: CallState.Pending,
  body: {
    id,
    name: 'restart_service',
    args: { service: 'api' },
    tier: 'confirm',
    fp: FP,
    defHash: 'b'.repeat(64),
    attempt: 0,
    reason: 'confirmation_required',
    i,
  },
});

async function parkedRun(runId: string, calls: FrontierCall[]) {
  await sut.claimRun({ runId, agent: 'ops', userId: 'alice', scopes: [], messages: [] }, starter);
  await sut.parkRun(runId, starter, [], calls);
}

describe('run store scripts', () => {
  it('resumes only when the last call of the frontier is decided, for exactly one of two racing jobs', async () => {
    await parkedRun('r1', [pending('c1', 0), pending('c2', 1)]);
    expect(await sut.applyDecision('r1', 'c1', 0, approve, { jobId: 'd1', token: 'x' })).toEqual({
      kind: 'recorded',
    });
    const race = await Promise.all([
      sut.applyDecision('r1', 'c2', 0, approve, { jobId: 'd2', token: 'x' }),
      sut.applyDecision('r1', 'c2', 0, approve, { jobId: 'd3', token: 'x' }),
    ]);
    expect(race.map((r) => r.kind).sort()).toEqual(['duplicate', 'resume']);
  });

  it('lets a redelivered job take its run over and locks the previous processing out', async () => {
    await parkedRun('r2', [pending('c1', 0)]);
    const first = { jobId: 'd1', token: 'first' };
    expect((await sut.applyDecision('r2', 'c1', 0, approve, first)).kind).toBe('resume');
    const redelivered = { jobId: 'd1', token: 'second' };
    expect((await sut.applyDecision('r2', 'c1', 0, approve, redelivered)).kind).toBe('takeover');
    await expect(sut.startCall('r2', first, 'c1', 'x1')).rejects.toBeInstanceOf(OwnershipLostError);
    await sut.startCall('r2', redelivered, 'c1', 'x2');
    await expect(sut.startCall('r2', redelivered, 'c1', 'x3')).rejects.toBeInstanceOf(WrongCallStateError);
  });

  describe('a call executing when its run is taken over', () => {
    const first = { jobId: 'd1', token: 'first' };
    const redelivered = { jobId: 'd1', token: 'second' };
    const result = { outcome: 'executed', content: '{"name":"api"}' };

    /** Approved, claimed for execution by `first`, then its decision job redelivered (takeover). */
    async function executingThenTakenOver(runId: string): Promise<void> {
      await parkedRun(runId, [pending('c1', 0)]);
      await sut.applyDecision(runId, 'c1', 0, approve, first);
      await sut.startCall(runId, first, 'c1', 'exec-1');
      expect((await sut.applyDecision(runId, 'c1', 0, approve, redelivered)).kind).toBe('takeover');
    }
    const reask = { ...pending('c1', 0).body, attempt: 1, reason: 'interrupted' as const };

    it('waits for an executor whose heartbeat is fresh, and changes nothing', async () => {
      await executingThenTakenOver('e1');
      expect(await sut.heartbeatCall('e1', 'c1', 'exec-1')).toBe(true);
      expect(await sut.settleExecutingCall('e1', redelivered, 'c1', 10_000, reask)).toMatchObject({
        kind: 'in_flight',
      });
      expect((await sut.load('e1'))!.frontier[0]).toMatchObject({ state: 'executing', body: { attempt: 0 } });
    });

    it("records the executor's result by its execution token though it lost the run, exactly once", async () => {
      await executingThenTakenOver('e2');
      expect(await sut.completeCall('e2', first, 'c1', 'exec-1', result)).toEqual({ stillOwner: false });
      await expect(sut.completeCall('e2', first, 'c1', 'exec-1', result)).rejects.toBeInstanceOf(
        ExecutionLostError,
      );
      expect(await sut.settleExecutingCall('e2', redelivered, 'c1', 10_000, reask)).toEqual({
        kind: 'done',
        result,
      });
      expect((await sut.load('e2'))!.frontier[0]).toMatchObject({ state: 'done', result });
    });

    it('interrupts and re-asks a call whose executor stopped beating, and then refuses its late result', async () => {
      await executingThenTakenOver('e3');
      await redis.hset(`{${prefixes.keyPrefix}:run:e3}`, 'c:c1:h', '0'); // last beat long ago: dead
      expect(await sut.settleExecutingCall('e3', redelivered, 'c1', 10_000, reask)).toEqual({
        kind: 'interrupted',
      });
      expect((await sut.load('e3'))!.frontier[0]).toMatchObject({
        state: 'pending',
        body: { attempt: 1, reason: 'interrupted' },
        decision: undefined,
      });
      expect(await sut.heartbeatCall('e3', 'c1', 'exec-1')).toBe(false);
      await expect(sut.completeCall('e3', first, 'c1', 'exec-1', result)).rejects.toBeInstanceOf(
        ExecutionLostError,
      );
    });

    it('lets only the current owner settle an executing call', async () => {
      await executingThenTakenOver('e4');
      await expect(sut.settleExecutingCall('e4', first, 'c1', 10_000, reask)).rejects.toBeInstanceOf(
        OwnershipLostError,
      );
    });
  });

  it('fails a run for a job that failed for good only while a processing of that job owns it', async () => {
    await parkedRun('f1', [pending('c1', 0)]);
    await sut.applyDecision('f1', 'c1', 0, approve, { jobId: 'd1', token: 'x' });
    const end = { status: 'failed' as const, error: 'stalled' };
    expect(await sut.finishRun('f1', { jobId: 'd2' }, end)).toBe(false);
    expect(await sut.finishRun('f1', { jobId: 'd' }, end)).toBe(false); // a prefix of the owner's job ID is not it
    expect(await sut.finishRun('f1', { jobId: 'd1' }, end)).toBe(true);
    expect((await sut.load('f1'))!.status).toBe('failed');
  });

  it.each([
    ['an unknown call', 'nope', 0, FP, 'call_not_in_frontier'],
    ['another attempt', 'c1', 1, FP, 'stale_attempt'],
    ['another fingerprint', 'c1', 0, 'c'.repeat(64), 'fingerprint_mismatch'],
  ])('leaves the call pending for %s', async (_what, callId, attempt, fingerprint, kind) => {
    const runId = `r3-${kind}`;
    await parkedRun(runId, [pending('c1', 0)]);
    expect(
      (
        await sut.applyDecision(
          runId,
          callId,
          attempt,
          { ...approve, fingerprint },
          { jobId: 'd', token: 'x' },
        )
      ).kind,
    ).toBe(kind);
    expect((await sut.load(runId))!.frontier[0].state).toBe('pending');
  });

  it('ignores a decision for a run that does not exist', async () => {
    expect((await sut.applyDecision('ghost', 'c1', 0, approve, { jobId: 'd', token: 'x' })).kind).toBe(
      'run_not_found',
    );
  });

  it('keeps a parked run small', async () => {
    await parkedRun('r4', [pending('call_0123456789abcdef01234567', 0)]);
    // One key per run: header and frontier in one hash.
    expect(await redis.keys(`{${prefixes.keyPrefix}:run:r4}*`)).toEqual([`{${prefixes.keyPrefix}:run:r4}`]);
    const bytes = (await redis.memory('USAGE', `{${prefixes.keyPrefix}:run:r4}`))!;
    expect(bytes).toBeLessThan(2048);
  });
});

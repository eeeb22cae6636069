// The run scripts (apps/agent-worker/src/runs/lua) against a real Redis: who may decide, resume and
// move a call, and what a stale, duplicated or foreign message gets.
import { Redis } from 'ioredis';
import { RunStore } from '../apps/agent-worker/src/runs/run-store';
import { CallState, type FrontierCall, type StoredDecision } from '../apps/agent-worker/src/runs/run-state';
import { OwnershipLostError, WrongCallStateError } from '../apps/agent-worker/src/runs/run-store.errors';
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
    await expect(
      sut.transitionCall('r2', first, 'c1', CallState.Approved, CallState.Executing),
    ).rejects.toBeInstanceOf(OwnershipLostError);
    await sut.transitionCall('r2', redelivered, 'c1', CallState.Approved, CallState.Executing);
    await expect(
      sut.transitionCall('r2', redelivered, 'c1', CallState.Approved, CallState.Executing),
    ).rejects.toBeInstanceOf(WrongCallStateError);
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
    const bytes =
      (await redis.memory('USAGE', `{${prefixes.keyPrefix}:run:r4}:meta`))! +
      (await redis.memory('USAGE', `{${prefixes.keyPrefix}:run:r4}:calls`))!;
    expect(bytes).toBeLessThan(2048);
  });
});

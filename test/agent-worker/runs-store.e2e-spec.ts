// The run scripts (apps/agent-worker/src/runs/lua) against a real Redis: who may decide, resume and
// move a call, and what a stale, duplicated or foreign message gets.
import { Redis } from 'ioredis';
import { fingerprint } from '@countersign/authorization';
import type { ChatMessage, RunEvent } from '@countersign/contracts';
import { RUN_EVENT_HISTORY } from '../../apps/agent-worker/src/runs/run-event-codec';
import { runKey } from '../../apps/agent-worker/src/runs/run-keys';
import { RunCalls } from '../../apps/agent-worker/src/runs/run-calls';
import { RunStore } from '../../apps/agent-worker/src/runs/run-store';
import { UnpublishedRequests } from '../../apps/agent-worker/src/runs/unpublished-requests';
import { CallState } from '@countersign/call-ledger';
import { type FrontierCall, type StoredDecision } from '../../apps/agent-worker/src/runs/run-state';
import {
  ExecutionLostError,
  OwnershipLostError,
  WrongCallStateError,
} from '../../apps/agent-worker/src/runs/run-store.errors';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from '../support/redis';

const prefixes = uniquePrefixes('runstore');
const redis = new Redis(TEST_REDIS_URL);
const sut = new RunStore(redis, prefixes.keyPrefix, 60);
const calls = new RunCalls(redis, prefixes.keyPrefix);
const unpublished = new UnpublishedRequests(redis, prefixes.keyPrefix);
afterAll(async () => {
  await redis.quit();
  await deletePrefixedKeys(prefixes);
});

const FP = 'a'.repeat(64);
const starter = { jobId: 'run-r', token: 't0', started: 1 };
const approve: StoredDecision = {
  decision: 'approve',
  decidedBy: 'person',
  approvers: ['bob'],
  fingerprint: FP,
  decidedAt: new Date().toISOString(),
};
const pending = (id: string, position: number): FrontierCall => ({
  state: CallState.Pending,
  body: {
    id,
    name: 'restart_service',
    args: { service: 'api' },
    tier: 'confirm',
    fingerprint: FP,
    definitionHash: 'b'.repeat(64),
    attempt: 0,
    reason: 'confirmation_required',
    requestId: `rq-${id}`,
    position,
  },
});
/** The request a decision answers: by default the one `pending(callId)` waits for. */
const req = (callId: string, attempt = 0, requestId = `rq-${callId}`) => ({ callId, requestId, attempt });

async function parkedRun(runId: string, calls: FrontierCall[]) {
  await sut.claimRun({ runId, agent: 'ops', userId: 'alice', scopes: [], messages: [] }, starter);
  await sut.parkRun(runId, starter, [], calls);
}

describe('run store scripts', () => {
  it('resumes only when the last call of the frontier is decided, for exactly one of two racing jobs', async () => {
    await parkedRun('r1', [pending('c1', 0), pending('c2', 1)]);
    expect(
      await sut.applyDecision('r1', req('c1', 0), approve, { jobId: 'd1', token: 'x', started: 1 }),
    ).toEqual({
      kind: 'recorded',
    });
    const race = await Promise.all([
      sut.applyDecision('r1', req('c2', 0), approve, { jobId: 'd2', token: 'x', started: 1 }),
      sut.applyDecision('r1', req('c2', 0), approve, { jobId: 'd3', token: 'x', started: 1 }),
    ]);
    expect(race.map((r) => r.kind).sort()).toEqual(['duplicate', 'resume']);
  });

  it('hands the resumer the run as the decision left it (the same record a load reads afterwards)', async () => {
    await parkedRun('r0', [pending('c1', 0), pending('c2', 1)]);
    await sut.applyDecision('r0', req('c1', 0), approve, { jobId: 'd1', token: 'x', started: 1 });
    const running: RunEvent[] = [{ type: 'status', runId: 'r0', status: 'running' }];
    const resumer = { jobId: 'd2', token: 'x', started: 1 };
    const resumed = await sut.applyDecision('r0', req('c2', 0), approve, resumer, running);
    expect(resumed.kind).toBe('resume');
    const run = (resumed as { run: unknown }).run;
    expect(run).toEqual(await sut.load('r0'));
    expect(run).toMatchObject({
      status: 'running',
      frontier: [{ state: 'approved' }, { state: 'approved' }],
    });
    // Its owner is this processing: the next step that checks ownership passes.
    await calls.startCall('r0', resumer, 'c1', 'x1');
  });

  it('lets a redelivered job take its run over and locks the previous processing out', async () => {
    await parkedRun('r2', [pending('c1', 0)]);
    const first = { jobId: 'd1', token: 'first', started: 1 };
    expect((await sut.applyDecision('r2', req('c1', 0), approve, first)).kind).toBe('resume');
    const redelivered = { jobId: 'd1', token: 'second', started: 2 };
    expect((await sut.applyDecision('r2', req('c1', 0), approve, redelivered)).kind).toBe('takeover');
    await expect(calls.startCall('r2', first, 'c1', 'x1')).rejects.toBeInstanceOf(OwnershipLostError);
    await calls.startCall('r2', redelivered, 'c1', 'x2');
    await expect(calls.startCall('r2', redelivered, 'c1', 'x3')).rejects.toBeInstanceOf(WrongCallStateError);
  });

  it("checkpoints a running run's messages for its owner only, and a redelivered resumer takes over from there", async () => {
    await parkedRun('r9', [pending('c1', 0)]);
    const resumer = { jobId: 'd9', token: 'first', started: 1 };
    expect((await sut.applyDecision('r9', req('c1'), approve, resumer)).kind).toBe('resume');
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c2', name: 'list_services', args: {} }] },
      { role: 'tool', toolCallId: 'c2', name: 'list_services', content: '[]' },
    ];
    await expect(
      sut.checkpointRun('r9', { jobId: 'd9', token: 'other', started: 1 }, messages),
    ).rejects.toBeInstanceOf(OwnershipLostError);
    expect((await sut.load('r9'))!.messages).toEqual([]);

    await sut.checkpointRun('r9', resumer, messages);
    const checkpointed = (await sut.load('r9'))!;
    expect(checkpointed).toMatchObject({ status: 'running', messages, frontier: [] });
    // The frontier it resumed from is gone, and the same job redelivered still takes the run over from the checkpoint.
    const again = await sut.applyDecision('r9', req('c1'), approve, {
      ...resumer,
      token: 'second',
      started: 2,
    });
    expect(again.kind === 'takeover' && again.run).toMatchObject({ messages, frontier: [] });
    await expect(sut.checkpointRun('r9', resumer, [])).rejects.toBeInstanceOf(OwnershipLostError);
    // Any other job's decision for the dropped call applies to nothing.
    expect(
      await sut.applyDecision('r9', req('c1'), approve, { jobId: 'other', token: 'x', started: 1 }),
    ).toEqual({
      kind: 'call_not_in_frontier',
    });
  });

  it('never lets an earlier processing of a decision job take the run back from its redelivery', async () => {
    await parkedRun('stale-d', [pending('c1', 0)]);
    // The first processing's lock lapsed before it reached Redis: its redelivery applied the decision first.
    const stale = { jobId: 'd1', token: 'first', started: 1 };
    const redelivered = { jobId: 'd1', token: 'second', started: 2 };
    expect((await sut.applyDecision('stale-d', req('c1', 0), approve, redelivered)).kind).toBe('resume');
    await expect(sut.applyDecision('stale-d', req('c1', 0), approve, stale)).rejects.toBeInstanceOf(
      OwnershipLostError,
    );
    await expect(sut.assertOwner('stale-d', redelivered)).resolves.toEqual([]);
    await expect(calls.startCall('stale-d', stale, 'c1', 'x1')).rejects.toBeInstanceOf(OwnershipLostError);
  });

  it('never lets an earlier processing of a start job claim the run back from its redelivery', async () => {
    const run = { runId: 'stale-s', agent: 'ops', userId: 'alice', scopes: [], messages: [] };
    const redelivered = { jobId: 'run-stale-s', token: 'second', started: 2 };
    expect((await sut.claimRun(run, redelivered)).kind).toBe('claimed');
    expect(await sut.claimRun(run, { jobId: 'run-stale-s', token: 'first', started: 1 })).toEqual({
      kind: 'skip',
    });
    await expect(sut.assertOwner('stale-s', redelivered)).resolves.toEqual([]);
    // A later processing still takes it over.
    const third = { jobId: 'run-stale-s', token: 'third', started: 3 };
    expect((await sut.claimRun(run, third)).kind).toBe('claimed');
    await expect(sut.assertOwner('stale-s', redelivered)).rejects.toBeInstanceOf(OwnershipLostError);
  });

  it('lets any processing of the job take over a run owned as versions before stored it (no start count)', async () => {
    await parkedRun('legacy', [pending('c1', 0)]);
    const first = { jobId: 'd1', token: 'first', started: 1 };
    expect((await sut.applyDecision('legacy', req('c1', 0), approve, first)).kind).toBe('resume');
    await redis.hset(runKey(prefixes.keyPrefix, 'legacy'), 'owner', 'd1|f00d:3');
    expect((await sut.applyDecision('legacy', req('c1', 0), approve, first)).kind).toBe('takeover');
  });

  it('hands a redelivered decision job that parked the run again the run to republish, and records nothing', async () => {
    await parkedRun('r5', [pending('c1', 0)]);
    const resumer = { jobId: 'decision-rq-c1', token: 'first', started: 1 };
    expect((await sut.applyDecision('r5', req('c1'), approve, resumer)).kind).toBe('resume');
    // The next turn reuses the call ID: a new call, waiting for a request of its own.
    const next = { ...pending('c1', 0), body: { ...pending('c1', 0).body, requestId: 'rq-turn-2' } };
    await sut.parkRun('r5', resumer, [], [next]);

    const again = await sut.applyDecision('r5', req('c1'), approve, {
      ...resumer,
      token: 'second',
      started: 2,
    });
    expect(again.kind).toBe('republish');
    expect(again.kind === 'republish' && again.run.frontier).toEqual([next]);
    // Any other job with the earlier request's decision (a replay) finds the call waiting for another request.
    expect(
      await sut.applyDecision('r5', req('c1'), approve, { jobId: 'replayed', token: 'x', started: 1 }),
    ).toEqual({
      kind: 'request_mismatch',
      pendingRequestId: 'rq-turn-2',
    });
    expect((await sut.load('r5'))!.frontier).toEqual([next]);
  });

  it('indexes parked calls whose request is not published yet, and drops them once it is', async () => {
    const entries = [
      { runId: 'u1', callId: 'c1', requestId: 'rq-1' },
      { runId: 'u1', callId: 'c2', requestId: 'rq-2' },
    ];
    await unpublished.markUnpublished(entries, 1_000);
    await unpublished.markUnpublished([entries[0]], 5_000); // noted again (a retried park): keeps its first time
    expect(await unpublished.unpublishedBefore(1_000, 10)).toEqual(['u1|c1|rq-1', 'u1|c2|rq-2']);
    expect(await unpublished.unpublishedBefore(999, 10)).toEqual([]);
    expect(await unpublished.countUnpublishedBefore(1_000)).toBe(2);
    await unpublished.markPublished([entries[0]]);
    expect(await unpublished.unpublishedBefore(1_000, 10)).toEqual(['u1|c2|rq-2']);
    await unpublished.dropUnpublished(['u1|c2|rq-2']);
    expect(await unpublished.countUnpublishedBefore(Number.MAX_SAFE_INTEGER)).toBe(0);
  });

  describe('a call executing when its run is taken over', () => {
    const first = { jobId: 'd1', token: 'first', started: 1 };
    const redelivered = { jobId: 'd1', token: 'second', started: 2 };
    const result = { outcome: 'executed', content: '{"name":"api"}' };

    /** Approved, claimed for execution by `first`, then its decision job redelivered (takeover). */
    async function executingThenTakenOver(runId: string): Promise<void> {
      await parkedRun(runId, [pending('c1', 0)]);
      await sut.applyDecision(runId, req('c1', 0), approve, first);
      await calls.startCall(runId, first, 'c1', 'exec-1');
      expect((await sut.applyDecision(runId, req('c1', 0), approve, redelivered)).kind).toBe('takeover');
    }
    const reask = { ...pending('c1', 0).body, attempt: 1, reason: 'interrupted' as const };

    it('waits for an executor whose heartbeat is fresh, and changes nothing', async () => {
      await executingThenTakenOver('e1');
      expect(await calls.heartbeatCall('e1', 'c1', 'exec-1')).toBe(true);
      expect(await calls.settleExecutingCall('e1', redelivered, 'c1', 10_000, reask)).toMatchObject({
        kind: 'in_flight',
      });
      expect((await sut.load('e1'))!.frontier[0]).toMatchObject({ state: 'executing', body: { attempt: 0 } });
    });

    it("records the executor's result by its execution token though it lost the run, exactly once", async () => {
      await executingThenTakenOver('e2');
      expect(await calls.completeCall('e2', first, 'c1', 'exec-1', result)).toEqual({ stillOwner: false });
      await expect(calls.completeCall('e2', first, 'c1', 'exec-1', result)).rejects.toBeInstanceOf(
        ExecutionLostError,
      );
      expect(await calls.settleExecutingCall('e2', redelivered, 'c1', 10_000, reask)).toEqual({
        kind: 'done',
        result,
      });
      expect((await sut.load('e2'))!.frontier[0]).toMatchObject({ state: 'done', result });
    });

    it("adds the call's result event to the run's history in the step that records the result, never for a refused one", async () => {
      const told = (runId: string): RunEvent => ({
        type: 'tool_result',
        runId,
        callId: 'c1',
        toolName: 'restart_service',
        ...result,
      });
      await executingThenTakenOver('e5');
      const before = (await sut.loadWithHistory('e5'))!.lastSeq;
      await calls.completeCall('e5', first, 'c1', 'exec-1', result, [told('e5')]);
      await expect(
        calls.completeCall('e5', first, 'c1', 'exec-1', result, [told('e5')]),
      ).rejects.toBeInstanceOf(ExecutionLostError);
      const stored = (await sut.loadWithHistory('e5'))!;
      expect(stored.history.filter((e) => e.seq > before)).toEqual([{ seq: before + 1, event: told('e5') }]);
    });

    it('interrupts and re-asks a call whose executor stopped beating, and then refuses its late result', async () => {
      await executingThenTakenOver('e3');
      await redis.hset(`{${prefixes.keyPrefix}:run:e3}`, 'c:c1:h', '0'); // last beat long ago: dead
      expect(await calls.settleExecutingCall('e3', redelivered, 'c1', 10_000, reask)).toEqual({
        kind: 'interrupted',
      });
      expect((await sut.load('e3'))!.frontier[0]).toMatchObject({
        state: 'pending',
        body: { attempt: 1, reason: 'interrupted' },
        decision: undefined,
      });
      expect(await calls.heartbeatCall('e3', 'c1', 'exec-1')).toBe(false);
      await expect(calls.completeCall('e3', first, 'c1', 'exec-1', result)).rejects.toBeInstanceOf(
        ExecutionLostError,
      );
    });

    it('lets only the current owner settle an executing call', async () => {
      await executingThenTakenOver('e4');
      await expect(calls.settleExecutingCall('e4', first, 'c1', 10_000, reask)).rejects.toBeInstanceOf(
        OwnershipLostError,
      );
    });
  });

  it('fails a run for a job that failed for good only while a processing of that job owns it', async () => {
    await parkedRun('f1', [pending('c1', 0)]);
    await sut.applyDecision('f1', req('c1', 0), approve, { jobId: 'd1', token: 'x', started: 1 });
    const end = { status: 'failed' as const, error: 'stalled' };
    expect(await sut.finishRun('f1', { jobId: 'd2' }, end)).toBe(false);
    expect(await sut.finishRun('f1', { jobId: 'd' }, end)).toBe(false); // a prefix of the owner's job ID is not it
    expect(await sut.finishRun('f1', { jobId: 'd1' }, end)).toBe(true);
    expect((await sut.load('f1'))!.status).toBe('failed');
  });

  it.each([
    ['an unknown call', req('nope'), FP, 'call_not_in_frontier'],
    ['another attempt', req('c1', 1), FP, 'stale_attempt'],
    [
      'another request of the same call ID (an earlier turn, another run)',
      req('c1', 0, 'rq-other'),
      FP,
      'request_mismatch',
    ],
    ['another fingerprint', req('c1'), 'c'.repeat(64), 'fingerprint_mismatch'],
  ])('leaves the call pending for %s', async (_what, request, fingerprint, kind) => {
    const runId = `r3-${kind}`;
    await parkedRun(runId, [pending('c1', 0)]);
    expect(
      (
        await sut.applyDecision(
          runId,
          request,
          { ...approve, fingerprint },
          { jobId: 'd', token: 'x', started: 1 },
        )
      ).kind,
    ).toBe(kind);
    expect((await sut.load(runId))!.frontier[0].state).toBe('pending');
  });

  it('ignores a decision for a run that does not exist', async () => {
    expect(
      (await sut.applyDecision('ghost', req('c1', 0), approve, { jobId: 'd', token: 'x', started: 1 })).kind,
    ).toBe('run_not_found');
  });

  it('keeps a parked run small', async () => {
    await parkedRun('r4', [pending('call_0123456789abcdef01234567', 0)]);
    // One key per run: header and frontier in one hash.
    expect(await redis.keys(`{${prefixes.keyPrefix}:run:r4}*`)).toEqual([`{${prefixes.keyPrefix}:run:r4}`]);
    const bytes = (await redis.memory('USAGE', `{${prefixes.keyPrefix}:run:r4}`))!;
    expect(bytes).toBeLessThan(2048);
  });

  describe('the event history', () => {
    const text = (runId: string, n: number): RunEvent => ({ type: 'text', runId, text: `event ${n}` });

    it('numbers events from 1 and keeps only the newest RUN_EVENT_HISTORY of them', async () => {
      await parkedRun('h1', [pending('c1', 0)]);
      const all = Array.from({ length: RUN_EVENT_HISTORY + 100 }, (_, i) => text('h1', i + 1));
      expect(await sut.appendEvents('h1', all.slice(0, 30))).toBe(1);
      expect(await sut.appendEvents('h1', all.slice(30))).toBe(31);

      const stored = (await sut.loadWithHistory('h1'))!;
      expect(stored.hasHistory).toBe(true);
      expect(stored.lastSeq).toBe(RUN_EVENT_HISTORY + 100);
      expect(stored.history.map((e) => e.seq)).toEqual(
        Array.from({ length: RUN_EVENT_HISTORY }, (_, i) => i + 101),
      );
      expect(stored.history[0].event).toEqual(text('h1', 101));
      expect(stored.run.frontier.map((c) => c.body.id)).toEqual(['c1']); // the run itself is untouched
    });

    it('stores nothing for a run that does not exist (no key without expiry is created)', async () => {
      expect(await sut.appendEvents('ghost-h', [text('ghost-h', 1)])).toBe(0);
      expect(await redis.exists(`{${prefixes.keyPrefix}:run:ghost-h}`)).toBe(0);
    });

    it('adds marked and unmarked events in one step, in order, each marked one at most once', async () => {
      await parkedRun('h6', [pending('c1', 0)]);
      const seen: { seq: number; events: unknown[] }[] = [];
      const listener = redis.duplicate();
      await listener.subscribe(`${prefixes.keyPrefix}:run-events`);
      listener.on('message', (_channel: string, message: string) => seen.push(JSON.parse(message)));
      try {
        expect(
          await sut.appendEventsOnce('h6', [
            { event: text('h6', 1), once: 'turn1:a' },
            { event: text('h6', 2) },
            { event: text('h6', 3), once: 'turn1:b' },
            { event: text('h6', 4), once: 'turn1:a' }, // the same marker twice in one batch: the first wins
          ]),
        ).toBe(1);
        // Sent again (a turn re-run after a crash): only what has no marker, or a new one, is added.
        expect(
          await sut.appendEventsOnce('h6', [
            { event: text('h6', 5), once: 'turn1:a' },
            { event: text('h6', 6) },
            { event: text('h6', 7), once: 'turn1:b' },
            { event: text('h6', 8), once: 'turn1:c' },
          ]),
        ).toBe(4);
        expect(
          await sut.appendEventsOnce('h6', [
            { event: text('h6', 9), once: 'turn1:a' },
            { event: text('h6', 10), once: 'turn1:c' },
          ]),
        ).toBe(-1);
        expect(await sut.appendEventsOnce('ghost-h6', [{ event: text('ghost-h6', 1), once: 'x' }])).toBe(0);
        expect(await redis.exists(`{${prefixes.keyPrefix}:run:ghost-h6}`)).toBe(0);

        const stored = (await sut.loadWithHistory('h6'))!;
        expect(stored.history).toEqual([1, 2, 3, 6, 8].map((n, i) => ({ seq: i + 1, event: text('h6', n) })));
        await new Promise((resolve) => setTimeout(resolve, 50));
        // One message per step that added something; none for the step that added nothing.
        expect(seen.map((m) => [m.seq, m.events.length])).toEqual([
          [1, 3],
          [4, 2],
        ]);
      } finally {
        listener.disconnect();
      }
    });

    it("stores a run's last events with its end, in the run's hash, so they expire with the run", async () => {
      await sut.claimRun({ runId: 'h2', agent: 'ops', userId: 'alice', scopes: [], messages: [] }, starter);
      await sut.appendEvents('h2', [{ type: 'status', runId: 'h2', status: 'running' }]);
      const last: RunEvent[] = [
        { type: 'status', runId: 'h2', status: 'completed' },
        { type: 'done', runId: 'h2', status: 'completed', result: 'ok' },
      ];
      expect(await sut.finishRun('h2', starter, { status: 'completed', result: 'ok' }, last)).toBe(true);
      const stored = (await sut.loadWithHistory('h2'))!;
      expect(stored.history).toEqual([
        { seq: 1, event: { type: 'status', runId: 'h2', status: 'running' } },
        { seq: 2, event: last[0] },
        { seq: 3, event: last[1] },
      ]);
      expect(await redis.keys(`{${prefixes.keyPrefix}:run:h2}*`)).toEqual([`{${prefixes.keyPrefix}:run:h2}`]);
      expect(await redis.ttl(`{${prefixes.keyPrefix}:run:h2}`)).toBeGreaterThan(0);
      // A run that was already finished gets no second ending in its history.
      expect(await sut.finishRun('h2', starter, { status: 'failed' }, last)).toBe(false);
      expect((await sut.loadWithHistory('h2'))!.lastSeq).toBe(3);
    });

    it('adds the start events in the step that claims the run, and only when it claims it', async () => {
      const run = { runId: 'h5', agent: 'ops', userId: 'alice', scopes: [], messages: [] };
      const running: RunEvent[] = [{ type: 'status', runId: 'h5', status: 'running' }];
      expect((await sut.claimRun(run, starter, running)).kind).toBe('claimed');
      expect((await sut.loadWithHistory('h5'))!.history).toEqual([{ seq: 1, event: running[0] }]);
      // Another job backs off (owned by a live job): nothing added.
      expect((await sut.claimRun(run, { jobId: 'other', token: 'y', started: 1 }, running)).kind).toBe(
        'skip',
      );
      expect((await sut.loadWithHistory('h5'))!.lastSeq).toBe(1);
    });

    it('adds the resume events in the step that completes the frontier, and only then', async () => {
      await parkedRun('h4', [pending('c1', 0), pending('c2', 1)]);
      const running: RunEvent[] = [{ type: 'status', runId: 'h4', status: 'running' }];
      const lease = (jobId: string) => ({ jobId, token: 'x', started: 1 });
      expect((await sut.applyDecision('h4', req('c1'), approve, lease('d1'), running)).kind).toBe('recorded');
      expect((await sut.loadWithHistory('h4'))!.lastSeq).toBe(0);
      const seen: string[] = [];
      const listener = redis.duplicate();
      await listener.subscribe(`${prefixes.keyPrefix}:run-events`);
      listener.on('message', (_channel: string, text: string) => seen.push(text));
      try {
        const resumed = await sut.applyDecision('h4', req('c2'), approve, lease('d2'), running);
        expect(resumed.kind).toBe('resume');
        const stored = (await sut.loadWithHistory('h4'))!;
        expect(stored.run.status).toBe('running');
        expect(stored.history).toEqual([{ seq: 1, event: running[0] }]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(seen.map((m) => JSON.parse(m) as { seq: number })).toEqual([
          expect.objectContaining({ runId: 'h4', seq: 1 }),
        ]);
        // A duplicate, or a takeover by a redelivery, adds nothing.
        await sut.applyDecision('h4', req('c2'), approve, lease('d3'), running);
        await sut.applyDecision('h4', req('c2'), approve, { jobId: 'd2', token: 'y', started: 2 }, running);
        expect((await sut.loadWithHistory('h4'))!.lastSeq).toBe(1);
      } finally {
        listener.disconnect();
      }
    });

    it('gives back a confirmation with the fingerprint of its tool name and arguments', async () => {
      await parkedRun('h3', [pending('c1', 0)]);
      const call = {
        callId: 'c1',
        toolName: 'restart_service',
        args: { service: 'api', at: 1.5 },
        tier: 'confirm' as const,
        fingerprint: fingerprint('restart_service', { service: 'api', at: 1.5 }),
      };
      await sut.appendEvents('h3', [{ type: 'tool_confirmation', runId: 'h3', call }]);
      expect((await sut.loadWithHistory('h3'))!.history[0].event).toEqual({
        type: 'tool_confirmation',
        runId: 'h3',
        call,
      });
    });
  });
});

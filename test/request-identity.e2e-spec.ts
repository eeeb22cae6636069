// Each parked call gets a request of its own, and no request is lost between a park and its publish:
// - a later turn that reuses a call ID, and another run that reuses one, are each asked about and decided on their
//   own, and replaying an earlier request's signed decision runs nothing;
// - a decision job whose publish failed after it parked the run again republishes on its retry, and a request its
//   job never published (it failed for good) is found by the request sweep, counted until then in the metric and
//   health detail of parked calls without a request;
// - an approved call whose tool fails part-way is audited as started, and as failed with the error.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  type ApprovalView,
  type AuditEntry,
  JobName,
  jobIds,
  QueueName,
  type StartRunBody,
} from '@countersign/contracts';
import { infraKeys } from '@countersign/demo-infra';
import { unpublishedRequestsKey } from '../apps/agent-worker/src/runs/run-keys';
import { RequestSweep } from '../apps/agent-worker/src/runs/request-sweep';
import { TEST_REDIS_URL, waitFor } from './support/redis';
import { TestSystem } from './support/system';

jest.setTimeout(60_000);

const redis = new Redis(TEST_REDIS_URL);
afterAll(() => redis.quit());

/** One confirm-tier restart per turn, then a final text. */
function turns(...calls: { id?: string; service: string }[]): StartRunBody['script'] {
  return [
    ...calls.map(({ id, service }) => ({
      toolCalls: [{ ...(id ? { id } : {}), name: 'restart_service', args: { service } }],
    })),
    { text: 'done' },
  ];
}

/** Services of this test's own, so a restart count is the execution count of one call. */
async function addServices(system: TestSystem, ...names: string[]): Promise<void> {
  const fields: Record<string, string> = {};
  for (const name of names)
    Object.assign(fields, {
      [`${name}:status`]: 'healthy',
      [`${name}:replicas`]: '1',
      [`${name}:restarts`]: '0',
    });
  await redis.hset(infraKeys(system.prefixes.keyPrefix).services, fields);
}

async function restarts(system: TestSystem, service: string): Promise<number> {
  return Number(await redis.hget(infraKeys(system.prefixes.keyPrefix).services, `${service}:restarts`));
}

/** The pending request of the run that `accept` takes, as bob (an approver of every request here) lists it. */
function pendingOf(
  system: TestSystem,
  runId: string,
  accept: (view: ApprovalView) => boolean = () => true,
): Promise<ApprovalView> {
  return waitFor(async () => {
    const { json } = await system.api<ApprovalView[]>('GET', '/approvals?status=pending&limit=500', 'bob');
    return json.find((v) => v.request.runId === runId && accept(v));
  }, `a pending request of run ${runId}`);
}

async function approve(system: TestSystem, id: string) {
  return system.api<{ requestId: string; status: string }>('POST', `/approvals/${id}/decisions`, 'bob', {
    decision: 'approve',
  });
}

/** The decisions queue, to replay a signed decision onto it exactly as the approval service published it. */
function decisionsQueue(system: TestSystem): Queue {
  return new Queue(QueueName.ApprovalDecisions, {
    connection: new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
    prefix: system.prefixes.queuePrefix,
  });
}

async function closeQueue(queue: Queue): Promise<void> {
  await queue.close();
  await (queue.opts.connection as Redis).quit();
}

/** Adds the decision published for `requestId` again, under another job ID, and waits until a worker took it. */
async function replay(queue: Queue, requestId: string, as: string): Promise<void> {
  const published = await waitFor(() => queue.getJob(jobIds.decision(requestId)), 'the published decision');
  const job = await queue.add(JobName.Decision, published.data, { jobId: as });
  await waitFor(async () => {
    const state = await queue.getJobState(job.id!);
    return state === 'completed' || state === 'failed';
  }, `replayed decision ${as} taken`);
}

async function auditOf(system: TestSystem, runId: string): Promise<AuditEntry[]> {
  return system.audit({ runId });
}

describe('a request of its own for every parked call', () => {
  let system: TestSystem;
  let decisions: Queue;
  beforeAll(async () => {
    system = await TestSystem.start('request-identity');
    decisions = decisionsQueue(system);
  });
  afterAll(async () => {
    if (decisions) await closeQueue(decisions);
    await system?.close();
  });

  it('asks about a later turn that reuses a call ID on its own, and a replay of the earlier decision runs nothing', async () => {
    await addServices(system, 'reuse-a', 'reuse-b');
    const runId = await system.startRun(
      turns({ id: 'reused', service: 'reuse-a' }, { id: 'reused', service: 'reuse-b' }),
    );
    const first = await pendingOf(system, runId);
    expect((await approve(system, first.request.requestId)).status).toBe(200);

    // The second turn's call has the same call ID: it is a new request, and it reaches the approvers.
    const second = await pendingOf(system, runId, (v) => v.request.requestId !== first.request.requestId);
    expect(second.request).toMatchObject({ callId: 'reused', attempt: 0, args: { service: 'reuse-b' } });
    expect(
      (await system.api<ApprovalView>('GET', `/approvals/${first.request.requestId}`, 'bob')).json,
    ).toMatchObject({ status: 'decided' });

    // The first request's genuine signed decision, replayed verbatim, approves nothing of the second.
    await replay(decisions, first.request.requestId, 'replay-of-the-first-turn');
    expect(await restarts(system, 'reuse-b')).toBe(0);
    expect((await system.run(runId)).pending).toEqual([
      expect.objectContaining({ callId: 'reused', requestId: second.request.requestId }),
    ]);
    expect((await auditOf(system, runId)).filter((e) => e.type === 'decision.ignored')).toEqual([
      expect.objectContaining({
        detail: {
          reason: 'request_mismatch',
          pendingRequestId: second.request.requestId,
          decisionRequestId: first.request.requestId,
        },
      }),
    ]);

    // The call ID names the newest request of its run: decided on its own, it runs once.
    const decided = await approve(system, 'reused');
    expect(decided).toMatchObject({ status: 200, json: { requestId: second.request.requestId } });
    const done = await system.waitForStatus(runId, 'completed');
    expect([await restarts(system, 'reuse-a'), await restarts(system, 'reuse-b')]).toEqual([1, 1]);
    // The model keeps its IDs: one result for each of its two calls named "reused".
    expect(done.messages.filter((m) => m.role === 'tool' && m.toolCallId === 'reused')).toHaveLength(2);
  });

  it('asks about a call whose ID another run used on its own, and a replay of the other run’s decision runs nothing', async () => {
    await addServices(system, 'shared-a', 'shared-b');
    const runA = await system.startRun(turns({ id: 'shared', service: 'shared-a' }));
    const runB = await system.startRun(turns({ id: 'shared', service: 'shared-b' }));
    const [a, b] = await Promise.all([pendingOf(system, runA), pendingOf(system, runB)]);
    expect(a.request.callId).toBe('shared');
    expect(b.request.callId).toBe('shared');
    expect(a.request.requestId).not.toBe(b.request.requestId);

    // Two open requests carry the call ID: it names neither, and the answer says which to name.
    const ambiguous = await system.api<{ message: string; error: string; requestIds: string[] }>(
      'GET',
      '/approvals/shared',
      'bob',
    );
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.json.message).toContain(a.request.requestId);
    expect(ambiguous.json.message).toContain(b.request.requestId);
    // A code of its own, not "already decided", and the IDs to choose from.
    expect(ambiguous.json.error).toBe('ambiguous_call_id');
    expect([...ambiguous.json.requestIds].sort()).toEqual([a.request.requestId, b.request.requestId].sort());
    expect((await approve(system, 'shared')).status).toBe(409);
    // The CLI says so distinctly (exit 8), naming the request IDs to use.
    const cli = await countersign(system.approvalUrl, [
      'approve',
      'shared',
      '--token',
      system.bearer('bob').Authorization.slice(7),
    ]);
    expect(cli.code).toBe(8);
    expect(cli.stderr).toContain('is used by requests of several runs');
    expect(cli.stderr).toContain(a.request.requestId);
    expect(cli.stderr).not.toContain('already decided');
    // Someone routed neither learns nothing about them.
    expect((await system.api('GET', '/approvals/shared', 'dave')).status).toBe(404);

    expect((await approve(system, a.request.requestId)).status).toBe(200);
    await system.waitForStatus(runA, 'completed');
    await replay(decisions, a.request.requestId, 'replay-of-the-other-run');
    expect(await restarts(system, 'shared-b')).toBe(0);
    expect((await system.run(runB)).status).toBe('awaiting_confirmation');

    // With one of them open, the call ID names it.
    expect(await approve(system, 'shared')).toMatchObject({
      status: 200,
      json: { requestId: b.request.requestId },
    });
    await system.waitForStatus(runB, 'completed');
    expect([await restarts(system, 'shared-a'), await restarts(system, 'shared-b')]).toEqual([1, 1]);
  });
});

describe('a request the job that parked the run failed to publish', () => {
  /** Only the retry of the decision job can publish here: the sweep looks once a minute. */
  it('is published when the decision job is retried', async () => {
    const system = await TestSystem.start('republish-retry', {
      workerEnv: { COUNTERSIGN_TEST_FAULTS: 'decision-park-then-fail-publish', REQUEST_SWEEP_MS: '60000' },
    });
    const decisions = decisionsQueue(system);
    try {
      await addServices(system, 'retry-a', 'retry-b');
      const runId = await system.startRun(turns({ service: 'retry-a' }, { service: 'retry-b' }));
      const first = await pendingOf(system, runId);
      expect((await approve(system, first.request.requestId)).status).toBe(200);
      const second = await pendingOf(system, runId, (v) => v.request.args.service === 'retry-b');
      // Its first processing parked the run and failed to publish; the second one published.
      const decisionJob = await decisions.getJob(jobIds.decision(first.request.requestId));
      expect([decisionJob?.attemptsMade, decisionJob?.failedReason]).toEqual([
        2,
        'injected fault decision-park-then-fail-publish (COUNTERSIGN_TEST_FAULTS)',
      ]);
      expect((await approve(system, second.request.requestId)).status).toBe(200);
      await system.waitForStatus(runId, 'completed');
      expect([await restarts(system, 'retry-a'), await restarts(system, 'retry-b')]).toEqual([1, 1]);
    } finally {
      await closeQueue(decisions);
      await system.close();
    }
  });

  it('is counted as a parked call without a request, and published by the request sweep, when no retry is left', async () => {
    const system = await TestSystem.start('republish-sweep', {
      workerEnv: { COUNTERSIGN_TEST_FAULTS: 'decision-park-then-fail-publish', REQUEST_SWEEP_MS: '60000' },
      // The attempts a worker gets at a decision are the approval service's to set: one here.
      approvalEnv: { DECISION_ATTEMPTS: '1' },
    });
    try {
      await addServices(system, 'sweep-a', 'sweep-b');
      const runId = await system.startRun(turns({ service: 'sweep-a' }, { service: 'sweep-b' }));
      expect((await approve(system, (await pendingOf(system, runId)).request.requestId)).status).toBe(200);
      // The decision job parked the run on the second call, failed to publish and failed for good.
      const decisions = decisionsQueue(system);
      const failed = await waitFor(
        async () =>
          (await decisions.getJobs(['failed'])).find((j) => /injected fault/.test(j.failedReason ?? '')),
        'the decision job to fail for good',
      ).finally(() => closeQueue(decisions));
      expect(failed.attemptsMade).toBe(1);
      const parked = await waitFor(async () => {
        const view = await system.run(runId);
        return view.status === 'awaiting_confirmation' && view.pending[0]?.toolName === 'restart_service'
          ? view.pending.find((p) => p.args.service === 'sweep-b')
          : undefined;
      }, 'parked on the second call');
      const index = unpublishedRequestsKey(system.prefixes.keyPrefix);
      const member = `${runId}|${parked.callId}|${parked.requestId}`;
      await waitFor(async () => (await redis.zscore(index, member)) !== null, 'noted as unpublished');

      // One sweep interval later (here: noted an hour ago), it counts as a parked call without a request.
      await redis.zadd(index, 'XX', Date.now() - 3_600_000, member);
      const health = async () => (await (await fetch(`${system.workerUrl}/health`)).json()) as object;
      const metric = async () =>
        (
          await (await fetch(`${system.workerUrl}/metrics`, { headers: system.bearer('scraper') })).text()
        ).match(/^countersign_parked_calls_without_request (\d+)$/m)?.[1];
      expect(await health()).toMatchObject({ status: 'ok', parkedCallsWithoutRequest: 1 });
      expect(await metric()).toBe('1');

      const pass = await system.workers[0].app.get(RequestSweep).sweep();
      expect(pass).toEqual({ published: 1, kept: 0, dropped: 0 });
      expect(await health()).toMatchObject({ parkedCallsWithoutRequest: 0 });
      expect(await metric()).toBe('0');

      const second = await pendingOf(system, runId, (v) => v.request.requestId === parked.requestId);
      expect((await approve(system, second.request.requestId)).status).toBe(200);
      await system.waitForStatus(runId, 'completed');
      expect([await restarts(system, 'sweep-a'), await restarts(system, 'sweep-b')]).toEqual([1, 1]);
    } finally {
      await system.close();
    }
  });
});

describe('an approved call whose tool fails part-way', () => {
  it('is audited as started, and as failed with the error', async () => {
    const system = await TestSystem.start('audit-failed', {
      workerEnv: { AGENTS_CONFIG: agentsConfigWith({ restartMs: 1_500 }) },
    });
    try {
      await addServices(system, 'half-way');
      const runId = await system.startRun(turns({ id: 'doomed', service: 'half-way' }));
      const pending = await pendingOf(system, runId);
      expect((await approve(system, pending.request.requestId)).status).toBe(200);
      // The restart's first step took effect; the service is gone before its second step.
      await waitFor(async () => (await restarts(system, 'half-way')) === 1, 'the restart to start');
      await redis.hdel(
        infraKeys(system.prefixes.keyPrefix).services,
        'half-way:status',
        'half-way:replicas',
        'half-way:restarts',
      );
      const done = await system.waitForStatus(runId, 'completed');
      expect(done.messages.find((m) => m.role === 'tool')).toMatchObject({
        content: 'Tool "restart_service" failed: unknown service "half-way"',
      });

      const execution = (await auditOf(system, runId)).filter((e) => e.type.startsWith('tool.'));
      expect(execution).toEqual([
        expect.objectContaining({
          type: 'tool.started',
          callId: 'doomed',
          actor: 'person',
          detail: expect.objectContaining({
            toolName: 'restart_service',
            requestId: pending.request.requestId,
          }),
        }),
        expect.objectContaining({
          type: 'tool.failed',
          callId: 'doomed',
          detail: expect.objectContaining({
            toolName: 'restart_service',
            error: 'unknown service "half-way"',
          }),
        }),
      ]);
    } finally {
      await system.close();
    }
  });
});

/** The repo's agents config with the `ops` agent's simulated infrastructure changed. */
function agentsConfigWith(infra: { restartMs?: number }): string {
  const config = JSON.parse(readFileSync(join(__dirname, '..', 'test/support/agents.json'), 'utf8'));
  config.agents.ops.infra = { ...config.agents.ops.infra, ...infra };
  const file = join(mkdtempSync(join(tmpdir(), 'cs-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** The compiled CLI against this system's approval service: its exit code and output. */
function countersign(
  approvalUrl: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(__dirname, '..', 'bin', 'countersign.js'), ...args], {
    env: { ...process.env, COUNTERSIGN_APPROVAL_URL: approvalUrl },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

// Runs survive workers: a parked run resumes on a fresh worker, two workers never double-execute,
// a deploy that changes a tool re-asks instead of executing, a worker killed (-9) mid-call gets its
// call marked interrupted and asked about again (never silently re-run), and a graceful stop
// finishes the call in flight.
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { JobName, jobIds, QueueName, type StartRunBody } from '@countersign/contracts';
import { AgentCatalog } from '../../apps/agent-worker/src/agents/agent-catalog';
import { InfraStore } from '@countersign/demo-infra';
import type { ChatModel } from '../../apps/agent-worker/src/models/chat-model';
import { RunStore } from '../../apps/agent-worker/src/runs/run-store';
import { OwnershipLostError } from '../../apps/agent-worker/src/runs/run-store.errors';
import { restartScript, WorkerHarness } from '../support/agent-worker-harness';
import { spawnWorker } from '../support/worker-process';
import { waitFor } from '../support/redis';
import { testFaultsFrom } from '../support/test-faults';

jest.setTimeout(45_000);

const REPO = join(__dirname, '..', '..');

/** The repo's agents config with the `ops` agent's simulated infrastructure changed. */
function agentsConfigWith(infra: { restartMs?: number; maxReplicas?: number }): string {
  return agentsConfigWhere(
    (config) => (config.agents.ops.infra = { ...(config.agents.ops.infra as object), ...infra }),
  );
}

/** The repo's agents config as `change` leaves it, in a file of its own. */
function agentsConfigWhere(
  change: (config: { agents: Record<string, Record<string, unknown>> }) => void,
): string {
  const config = JSON.parse(readFileSync(join(REPO, 'test/support/agents.json'), 'utf8'));
  change(config);
  const file = join(mkdtempSync(join(tmpdir(), 'cs-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe('agent worker recovery', () => {
  const h = new WorkerHarness('recovery');
  afterAll(() => h.cleanup());

  it('resumes a parked run on a new worker after the old one stopped', async () => {
    const first = await h.startWorker();
    const before = await h.restarts(first.url, 'api');
    const runId = await h.startRun(first.url, { script: restartScript('api') });
    const [call] = await h.waitForPending(first.url, runId);
    await first.close();

    const second = await h.startWorker();
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await h.waitForStatus(second.url, runId, 'completed');
    expect(await h.restarts(second.url, 'api')).toBe(before + 1);
    await second.close();
  });

  it('lets two workers on one Redis resume runs without executing any call twice', async () => {
    const [a, b] = await Promise.all([h.startWorker(), h.startWorker()]);
    const before = await h.restarts(a.url, 'web');
    const runIds = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h.startRun(i % 2 ? a.url : b.url, { script: restartScript('web') }),
      ),
    );
    const calls = await Promise.all(
      runIds.map(async (runId) => ({ runId, call: (await h.waitForPending(a.url, runId))[0] })),
    );

    // Every decision twice, all at once: both workers race for every run.
    const decisions = calls.flatMap(({ runId, call }) => [
      h.decision(runId, call, 'approve'),
      h.decision(runId, call, 'approve'),
    ]);
    await Promise.all(decisions.map((d) => h.publishDecision(d)));
    for (const runId of runIds) await h.waitForStatus(b.url, runId, 'completed');

    expect(await h.restarts(a.url, 'web')).toBe(before + runIds.length);
    await Promise.all([a.close(), b.close()]);
  });

  it('asks again instead of executing when the tool changed between parking and resuming', async () => {
    const old = await h.startWorker();
    const runId = await h.startRun(old.url, {
      script: [{ toolCalls: [{ name: 'scale_service', args: { service: 'api', replicas: 5 } }] }],
    });
    const [call] = await h.waitForPending(old.url, runId);
    const replicasBefore = (await h.infra(old.url)).services.find((s) => s.name === 'api')!.replicas;
    await old.close();

    // A "deploy": scale_service now accepts at most 10 replicas, so its JSON schema and definition hash changed.
    const deployed = await h.startWorker({ AGENTS_CONFIG: agentsConfigWith({ maxReplicas: 10 }) });
    await h.publishDecision(h.decision(runId, call, 'approve'));
    const again = await waitFor(
      () => h.approvalRequest(call.callId, 1),
      'the re-ask after the definition changed',
    );
    expect(again).toMatchObject({ reason: 'definition_changed', attempt: 1, fingerprint: call.fingerprint });
    expect(again.toolDefinitionHash).not.toBe((await h.approvalRequest(call.callId, 0))!.toolDefinitionHash);
    expect((await h.infra(deployed.url)).services.find((s) => s.name === 'api')!.replicas).toBe(
      replicasBefore,
    );
    expect((await h.run(deployed.url, runId)).status).toBe('awaiting_confirmation');

    // A decision on the old attempt no longer counts; one on the new attempt's request runs it.
    await h.settled(await h.publishDecision(h.decision(runId, call, 'approve')));
    expect((await h.run(deployed.url, runId)).status).toBe('awaiting_confirmation');
    await h.publishDecision(h.decision(runId, call, 'approve', { attempt: 1, requestId: again.requestId }));
    await h.waitForStatus(deployed.url, runId, 'completed');
    expect((await h.infra(deployed.url)).services.find((s) => s.name === 'api')!.replicas).toBe(5);
    await deployed.close();
  });

  it('finishes the tool call in flight when stopped gracefully', async () => {
    const worker = await h.startWorker({ AGENTS_CONFIG: agentsConfigWith({ restartMs: 800 }) });
    const before = await h.restarts(worker.url, 'payments');
    const runId = await h.startRun(worker.url, { script: restartScript('payments') });
    const [call] = await h.waitForPending(worker.url, runId);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await waitFor(
      async () =>
        (await h.infra(worker.url)).services.find((s) => s.name === 'payments')?.status === 'restarting',
      'restart in flight',
    );

    await worker.close();
    const status = await h.redis.hget(`{${h.prefixes.keyPrefix}:run:${runId}}`, 'status');
    expect(status).toBe('completed');
    expect(Number(await h.redis.hget(`{${h.prefixes.keyPrefix}:infra}:services`, 'payments:restarts'))).toBe(
      before + 1,
    );
  });

  it('lets a live worker whose lock lapsed mid-call finish it: the call runs once and is not asked again', async () => {
    const agents = agentsConfigWith({ restartMs: 3_000 });
    const a = await h.startWorker({ AGENTS_CONFIG: agents });
    const before = await h.restarts(a.url, 'web');
    const runId = await h.startRun(a.url, { script: restartScript('web') });
    const [call] = await h.waitForPending(a.url, runId);
    const job = await h.publishDecision(h.decision(runId, call, 'approve'));
    await waitFor(
      async () => (await h.infra(a.url)).services.find((s) => s.name === 'web')?.status === 'restarting',
      'the restart to start on the first worker',
    );

    // The first worker is alive and busy, but its lock is gone (as when renewal is starved under load):
    // BullMQ redelivers the decision job, to the second worker or to the first one again.
    const b = await h.startWorker({ AGENTS_CONFIG: agents });
    await h.redis.del(`${h.prefixes.queuePrefix}:${QueueName.ApprovalDecisions}:${job.id}:lock`);
    await waitFor(
      async () =>
        Number(
          await h.redis.hget(`${h.prefixes.queuePrefix}:${QueueName.ApprovalDecisions}:${job.id}`, 'stc'),
        ) >= 1,
      'the decision job to be redelivered',
    );

    const end = await waitFor(async () => {
      const view = await h.run(b.url, runId);
      if (view.status === 'completed') return { view, reasked: undefined };
      const reasked = await h.approvalRequest(call.callId, 1);
      return reasked ? { view, reasked } : undefined;
    }, 'the run to complete (or the call to be asked again)');
    expect(end.reasked).toBeUndefined();
    expect(end.view.status).toBe('completed');
    expect(await h.restarts(b.url, 'web')).toBe(before + 1);
    const types = await h.auditTypes(runId);
    expect(types).not.toContain('tool.interrupted');
    expect(types.filter((t) => t === 'tool.executed')).toHaveLength(1);
    expect(types.filter((t) => t === 'tool.started')).toHaveLength(1);
    // Resumed by the first processing, then once after the wait; the receipt audited per delivery, not per wait.
    expect(types.filter((t) => t === 'run.resumed')).toHaveLength(2);
    expect(types.filter((t) => t === 'decision.received')).toHaveLength(2);
    const toolMessage = end.view.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId);
    expect(JSON.parse((toolMessage as { content: string }).content)).toMatchObject({
      name: 'web',
      restarts: before + 1,
    });
    await Promise.all([a.close(), b.close()]);
  });

  it('never lets a stale processing of a decision job take the run back from its redelivery', async () => {
    // Under CPU starvation a processing can lose its lock before it even applied its decision: BullMQ redelivers
    // the job to another worker, which resumes the run; only then does the stale processing reach Redis. It must
    // not take the run over: it holds no lock any more, so it cannot wait for the call in flight, and the
    // redelivery, finding the run taken, would end the job with the run left `running`.
    const agents = agentsConfigWith({ restartMs: 2_000 });
    // One job at a time: while its first processing waits, the first worker cannot take the redelivery itself.
    const first = await h.startWorker({ AGENTS_CONFIG: agents, WORKER_CONCURRENCY: '1' });
    const store = first.app.get(RunStore);
    const before = await h.restarts(first.url, 'web');
    const runId = await h.startRun(first.url, { script: restartScript('web') });
    const [call] = await h.waitForPending(first.url, runId);

    // The first processing stops just before its decision script, until the test lets it go on.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const applyDecision = store.applyDecision.bind(store);
    let staleApplied: Promise<unknown> | undefined;
    const held = jest.spyOn(store, 'applyDecision').mockImplementation(async (...args) => {
      await released;
      const applied = applyDecision(...args);
      staleApplied = applied.then(
        (result) => result.kind,
        (error: unknown) => error,
      );
      return applied;
    });
    let live: Awaited<ReturnType<typeof h.startWorker>> | undefined;
    try {
      const job = await h.publishDecision(h.decision(runId, call, 'approve'));
      await waitFor(() => held.mock.calls.length > 0, 'the first processing to reach its decision script');
      live = await h.startWorker({ AGENTS_CONFIG: agents });
      // Its lock lapsed (as when renewal is starved under load): BullMQ redelivers the job to the live worker.
      await h.redis.del(`${h.prefixes.queuePrefix}:${QueueName.ApprovalDecisions}:${job.id}:lock`);
      await waitFor(
        async () =>
          (await h.infra(first.url)).services.find((s) => s.name === 'web')?.status === 'restarting',
        'the redelivery to resume the run and start the restart',
      );

      // The stale processing applies its decision while the redelivery's call still runs.
      release();
      const outcome = await waitFor(() => staleApplied, 'the stale processing to apply its decision');
      expect(await h.settled(job)).toBe('completed');
      const view = await h.waitForStatus(first.url, runId, 'completed', 'the run to complete');
      expect(view.result).toBe('restarted');
      expect(await h.restarts(first.url, 'web')).toBe(before + 1);
      const types = await h.auditTypes(runId);
      expect(types.filter((t) => t === 'tool.started')).toHaveLength(1);
      expect(types).not.toContain('tool.interrupted');
      // The stale processing stopped at its decision script: the redelivery kept the run.
      expect(outcome).toBeInstanceOf(OwnershipLostError);
    } finally {
      release();
      held.mockRestore();
      await Promise.all([first.close(), live?.close()]);
    }
  });

  describe('a processing whose run was taken over (its job redelivered while it still works)', () => {
    const statusCalls = (n: number) => ({
      toolCalls: Array.from({ length: n }, () => ({ name: 'get_service_status', args: { service: 'api' } })),
    });
    const script: StartRunBody['script'] = [statusCalls(2), statusCalls(1), { text: 'checked' }];

    /** Starts the run on a worker whose model and status tool report to the test; `takeOver` fires at `when`. */
    async function runWithTakeover(when: 'model turn' | 'auto call') {
      const worker = await h.startWorker();
      const store = worker.app.get(RunStore);
      const agent = worker.app.get(AgentCatalog).get('ops')!;
      const infra = worker.app.get(InfraStore);
      let runId = '';
      let taken = false;
      // The redelivered processing of the same run.start job: same job ID, a fresh lock token.
      const takeOver = async () => {
        if (taken) return;
        taken = true;
        // The worker may call the model before POST /runs has answered the test: wait for the run's ID.
        await waitFor(() => runId, 'the run ID from POST /runs');
        const claim = await store.claimRun(
          { runId, agent: 'ops', userId: 'alice', scopes: [], messages: [] },
          // Started after the processing it takes the run from (the first one, number 1).
          { jobId: jobIds.startRun(runId), token: 'redelivered', started: 2 },
        );
        expect(claim.kind).toBe('claimed');
      };
      const model = agent.model!;
      const turns: number[] = [];
      const wrapped: ChatModel = {
        provider: model.provider,
        next: async (request) => {
          turns.push(request.messages.length);
          if (when === 'model turn') await takeOver();
          return model.next(request);
        },
      };
      agent.model = wrapped;
      const service = infra.service.bind(infra);
      const statusReads = jest.spyOn(infra, 'service').mockImplementation(async (name) => {
        if (when === 'auto call') await takeOver();
        return service(name);
      });
      try {
        runId = await h.startRun(worker.url, { script });
        const job = await waitFor(async () => {
          const found = await h.runs.getJob(jobIds.startRun(runId));
          return found && (await found.isCompleted()) ? found : undefined;
        }, 'the start job to end');
        const ended = await h.runs.getJob(job.id!);
        return {
          returned: ended!.returnvalue as unknown,
          modelTurns: turns.length,
          toolRuns: statusReads.mock.calls.length,
        };
      } finally {
        statusReads.mockRestore();
        agent.model = model;
        await worker.close();
      }
    }

    it('runs none of the auto calls the model asked for in a turn during which it lost the run', async () => {
      expect(await runWithTakeover('model turn')).toEqual({
        returned: 'ownership_lost',
        modelTurns: 1,
        toolRuns: 0,
      });
    });

    it('asks the model no further turn (and runs no further auto call) after losing the run while auto calls ran', async () => {
      expect(await runWithTakeover('auto call')).toEqual({
        returned: 'ownership_lost',
        modelTurns: 1,
        toolRuns: 2,
      });
    });
  });

  it('fails the run, saying why, when BullMQ gives up on a decision job that stalled too often', async () => {
    const worker = await h.startWorker({
      AGENTS_CONFIG: agentsConfigWith({ restartMs: 2_000 }),
      MAX_STALLED_COUNT: '0',
    });
    const runId = await h.startRun(worker.url, { script: restartScript('api') });
    const [call] = await h.waitForPending(worker.url, runId);
    const job = await h.publishDecision(h.decision(runId, call, 'approve'));
    await waitFor(
      async () => (await h.infra(worker.url)).services.find((s) => s.name === 'api')?.status === 'restarting',
      'the restart to start',
    );

    await h.redis.del(`${h.prefixes.queuePrefix}:${QueueName.ApprovalDecisions}:${job.id}:lock`);
    expect(await h.settled(job)).toBe('failed');
    const view = await h.waitForStatus(worker.url, runId, 'failed');
    expect(view.error).toMatch(/stalled more than allowable limit/);
    await worker.close();
  });

  describe('a worker killed with SIGKILL while executing an approved call', () => {
    let child: ChildProcess | undefined;
    afterAll(() => child?.kill('SIGKILL'));

    it('marks the call interrupted and asks again, and never re-runs it on its own', async () => {
      const { url, process: proc } = await spawnWorker(h, {
        AGENTS_CONFIG: agentsConfigWith({ restartMs: 30_000 }),
      });
      child = proc;
      const before = await h.restarts(url, 'api');
      const runId = await h.startRun(url, { script: restartScript('api') });
      const [call] = await h.waitForPending(url, runId);
      await h.publishDecision(h.decision(runId, call, 'approve'));
      await waitFor(
        async () => (await h.infra(url)).services.find((s) => s.name === 'api')?.status === 'restarting',
        'the restart to start',
      );

      proc.kill('SIGKILL');
      await new Promise((resolve) => proc.once('exit', resolve));

      // A healthy worker notices the stalled decision job (lock expired) and takes the run over.
      const rescuer = await h.startWorker();
      const again = await waitFor(
        () => h.approvalRequest(call.callId, 1),
        'a new approval request for the interrupted call',
        20_000,
      );
      expect(again).toMatchObject({ reason: 'interrupted', attempt: 1, fingerprint: call.fingerprint });
      expect(await h.auditTypes(runId)).toContain('tool.interrupted');
      expect(await h.restarts(rescuer.url, 'api')).toBe(before + 1); // the killed attempt, and nothing more
      expect((await h.run(rescuer.url, runId)).pending.map((p) => p.callId)).toEqual([call.callId]);

      await h.publishDecision(h.decision(runId, call, 'approve', { attempt: 1, requestId: again.requestId }));
      await h.waitForStatus(rescuer.url, runId, 'completed');
      expect(await h.restarts(rescuer.url, 'api')).toBe(before + 2);
      await rescuer.close();
    });
  });
});

describe('a run whose agent cannot run (any longer)', () => {
  const h = new WorkerHarness('cannot-run');
  afterAll(() => h.cleanup());

  it('fails a start job for an agent that is no longer configured, saying so', async () => {
    const worker = await h.startWorker();
    const runId = 'run-of-a-removed-agent';
    // POST /runs refuses an unknown agent: the job comes from before a deploy that removed it.
    await h.runs.add(
      JobName.StartRun,
      { runId, agent: 'removed', userId: 'alice', input: 'go', scopes: [] },
      { jobId: jobIds.startRun(runId) },
    );
    const failed = await h.waitForStatus(worker.url, runId, 'failed');
    expect(failed.error).toBe('agent "removed" cannot run: it is not configured');
    expect(await h.auditTypes(runId)).not.toContain('tool.started');
    await worker.close();
  });

  it('fails a parked run on its decision when its agent lost its model in a deploy, running nothing', async () => {
    const first = await h.startWorker();
    const before = await h.restarts(first.url, 'api');
    const runId = await h.startRun(first.url, { script: restartScript('api') });
    const [call] = await h.waitForPending(first.url, runId);
    await first.close();

    // The redeployed worker has the `ops` agent on the openai provider, and no OPENAI_API_KEY.
    const openai = agentsConfigWhere((config) => (config.agents.ops.model = { provider: 'openai' }));
    const redeployed = await h.startWorker({ AGENTS_CONFIG: openai });
    await h.publishDecision(h.decision(runId, call, 'approve'));
    const failed = await h.waitForStatus(redeployed.url, runId, 'failed');
    expect(failed.error).toBe(
      'agent "ops" cannot run: its model provider is openai and OPENAI_API_KEY is not set',
    );
    expect(await h.restarts(redeployed.url, 'api')).toBe(before);
    const types = await h.auditTypes(runId);
    expect(types).toContain('run.resumed');
    expect(types).not.toContain('tool.started');
    await redeployed.close();
  });
});

describe('the test faults (test/support/test-faults.ts, read by the harnesses only)', () => {
  it('are taken only by their names, and none unless asked', () => {
    expect(testFaultsFrom({})).toEqual([]);
    expect(
      testFaultsFrom({
        COUNTERSIGN_TEST_FAULTS: 'decision-park-then-kill, decision-park-then-fail-publish',
      }),
    ).toEqual(['decision-park-then-kill', 'decision-park-then-fail-publish']);
    expect(() => testFaultsFrom({ COUNTERSIGN_TEST_FAULTS: 'crash-sometimes' })).toThrow(
      /COUNTERSIGN_TEST_FAULTS/,
    );
  });
});

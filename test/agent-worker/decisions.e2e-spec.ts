// The agent worker's side of the approver features, against a real Redis: a request carries what the run is for and
// the tool's preview (the tool's description and schema go to the tool catalog once); a signed decision with edited
// arguments runs exactly those, once, after the worker's own checks, and never anything when they fail them; a signed
// "manual step done" reaches the model's next turn, and a forged one is refused.
import { JobName, jobIds, type ManualStepDone } from '@countersign/contracts';
import { preconditionDigest, withSignature } from '@countersign/authorization';
import { DecidedCallResults, ToolCatalog } from '@countersign/shared-records';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { TEST_SECRET, WorkerHarness } from '../support/agent-worker-harness';
import { waitFor } from '../support/redis';

jest.setTimeout(30_000);

describe('agent worker: context, edited arguments and manual steps', () => {
  const h = new WorkerHarness('worker-ux');
  let worker: RunningAgentWorker;
  let url: string;

  beforeAll(async () => {
    worker = await h.startWorker();
    url = worker.url;
  });
  afterAll(() => h.cleanup());

  it('asks with the run input, the model text and the preview, and stores the tool once in the catalog', async () => {
    const runId = await h.startRun(url, {
      input: 'make   room\nfor the sale',
      script: [
        {
          text: 'payments needs more capacity.',
          toolCalls: [{ id: 'ctx-1', name: 'scale_service', args: { service: 'payments', replicas: 5 } }],
        },
        { text: 'ok' },
      ],
    });
    await h.waitForPending(url, runId);
    const request = await waitFor(() => h.approvalRequest('ctx-1'), 'the request');
    expect(request?.context).toEqual({
      input: 'make room for the sale',
      modelText: 'payments needs more capacity.',
      preview: 'payments: 2 → 5 replicas',
    });
    // Not in the queued message: the description and schema are in the catalog, once per definition.
    const job = await h.requests.getJob(request!.requestId);
    expect(JSON.stringify(job?.data)).not.toContain('Sets the number of replicas');
    const tools = await new ToolCatalog(h.redis, h.prefixes.keyPrefix).get([request!.toolDefinitionHash]);
    expect(tools.get(request!.toolDefinitionHash)).toMatchObject({
      name: 'scale_service',
      tier: 'confirm',
      description: 'Sets the number of replicas of a service.',
      argsSchema: { properties: { replicas: { type: 'integer', maximum: 20 } } },
    });
    // The model's text is part of the conversation it goes on with.
    expect((await h.run(url, runId)).messages[1]).toMatchObject({
      role: 'assistant',
      content: 'payments needs more capacity.',
    });
  });

  it('runs the edited arguments of a signed decision, once, and tells the model', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'edit-1', name: 'scale_service', args: { service: 'web', replicas: 9 } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    const decision = h.decision(runId, call, 'approve', { args: { service: 'web', replicas: 3 } });
    const job = await h.publishDecision(decision);
    await h.publishDecision(decision, 'edit-1-again'); // a duplicate runs nothing more
    const view = await h.waitForStatus(url, runId, 'completed');
    expect((await h.infra(url)).services.find((s) => s.name === 'web')?.replicas).toBe(3);
    expect(await h.settled(job)).toBe('completed');
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: expect.stringContaining(
        'The call ran with {"service":"web","replicas":3}, not the {"service":"web","replicas":9} you asked for.',
      ),
    });
    const executed = (await h.audit.read({ callId: 'edit-1' })).filter((e) => e.type === 'tool.executed');
    expect(executed).toHaveLength(1);
    expect(executed[0].detail).toMatchObject({
      args: { service: 'web', replicas: 3 },
      requestedArgs: { service: 'web', replicas: 9 },
    });
    // What became of it, for approvers' history (by request: a call ID may be reused).
    const results = await new DecidedCallResults(h.redis, h.prefixes.keyPrefix).read([call.requestId!]);
    expect(results.get(call.requestId!)).toMatchObject({
      outcome: 'executed',
      editedArgs: { service: 'web', replicas: 3 },
    });
  });

  it('runs nothing when edited arguments fail the tool’s own schema, and says why', async () => {
    const before = (await h.infra(url)).services.find((s) => s.name === 'api')!;
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'edit-2', name: 'scale_service', args: { service: 'api', replicas: 4 } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    await h.publishDecision(h.decision(runId, call, 'approve', { args: { service: 'api', replicas: 50 } }));
    const view = await h.waitForStatus(url, runId, 'completed');
    expect((await h.infra(url)).services.find((s) => s.name === 'api')).toEqual(before);
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: expect.stringMatching(
        /edited the arguments to .*"replicas":50.* but that call was refused, so nothing ran/,
      ),
    });
    expect((await h.audit.read({ callId: 'edit-2' })).some((e) => e.type === 'tool.executed')).toBe(false);
  });

  it('tells the model at its next turn that a person did a manual step, and refuses a forged note', async () => {
    const runId = await h.startRun(url, {
      script: [
        {
          toolCalls: [
            { id: 'man-1', name: 'delete_volume', args: { volume: 'scratch' } },
            { id: 'man-2', name: 'restart_service', args: { service: 'web' } },
          ],
        },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    // The notice carries the tool's preview too.
    expect((await waitFor(() => h.approvalRequest('man-1'), 'the notice'))?.context?.preview).toBe(
      'scratch: 10 GB and all its data',
    );
    const notice = await waitFor(() => h.approvalRequest('man-1'), 'the notice');
    const done: ManualStepDone = {
      requestId: notice!.requestId,
      callId: 'man-1',
      runId,
      toolName: 'delete_volume',
      args: { volume: 'scratch' },
      doneBy: 'bob',
      note: 'snapshot first',
      doneAt: new Date().toISOString(),
    };
    const forged = await h.decisions.add(
      JobName.ManualStepDone,
      withSignature({ ...done, doneBy: 'mallory' }, 'not-the-secret-0123456789'),
    );
    expect(await h.settled(forged)).toBe('failed');
    const job = await h.decisions.add(JobName.ManualStepDone, withSignature({ ...done }, TEST_SECRET), {
      jobId: jobIds.manualStepDone(done.requestId),
    });
    expect(await h.settled(job)).toBe('completed');
    await waitFor(async () => (await h.auditTypes(runId)).includes('manual_step.noted'), 'noted');

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const view = await h.waitForStatus(url, runId, 'completed');
    const notes = view.messages.filter((m) => m.role === 'user' && m.content.includes('manual step man-1'));
    expect(notes).toEqual([
      {
        role: 'user',
        content: `[Countersign: manual step man-1 done (request ${done.requestId})] A person did the manual step delete_volume {"volume":"scratch"} that you could not run (marked done by bob: "snapshot first").`,
      },
    ]);
    expect(JSON.stringify(view.messages)).not.toContain('mallory');
  });
  it('audits a forged decision and a forged manual-step note once each, as decision.rejected, and applies neither', async () => {
    const runId = await h.startRun(url, {
      script: [
        {
          toolCalls: [
            { id: 'forged-man', name: 'delete_volume', args: { volume: 'scratch' } },
            { id: 'forged-dec', name: 'restart_service', args: { service: 'api' } },
          ],
        },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    const notice = await waitFor(() => h.approvalRequest('forged-man'), 'the notice');
    const note: ManualStepDone = {
      requestId: notice!.requestId,
      callId: 'forged-man',
      runId,
      toolName: 'delete_volume',
      args: { volume: 'scratch' },
      doneBy: 'mallory',
      doneAt: new Date().toISOString(),
    };
    const jobs = [
      await h.publishDecision(h.decision(runId, call, 'approve', {}, 'not-the-secret-0123456789')),
      await h.decisions.add(JobName.ManualStepDone, withSignature({ ...note }, 'not-the-secret-0123456789')),
    ];
    for (const job of jobs) expect(await h.settled(job)).toBe('failed');

    const rejected = (await h.audit.read({ runId })).filter((e) => e.type === 'decision.rejected');
    expect(rejected.map((e) => [e.callId, e.actor, e.detail])).toEqual(
      expect.arrayContaining([
        ['forged-dec', 'agent-worker', { reason: 'missing or invalid signature', requestId: call.requestId }],
        [
          'forged-man',
          'agent-worker',
          { reason: 'missing or invalid signature', kind: 'manual_step_done', requestId: note.requestId },
        ],
      ]),
    );
    expect(rejected).toHaveLength(2);
    expect((await h.run(url, runId)).status).toBe('awaiting_confirmation');
    expect(await h.auditTypes(runId)).not.toContain('manual_step.noted');
  });

  it('runs nothing on a signed decision that names another precondition value than the request showed, and asks again', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'pre-1', name: 'scale_service', args: { service: 'api', replicas: 7 } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    const replicas = async () => (await h.infra(url)).services.find((s) => s.name === 'api')!.replicas;
    const before = await replicas();
    expect(call.precondition).toMatchObject({ value: { replicas: before } });
    // Signed with the right secret, for the right request and arguments, but for a world with 99 replicas.
    await h.publishDecision(
      h.decision(runId, call, 'approve', { precondition: preconditionDigest({ replicas: 99 }) }),
    );
    const again = await waitFor(() => h.approvalRequest('pre-1', 1), 'the re-ask');
    expect(again).toMatchObject({
      reason: 'precondition_changed',
      precondition: { value: { replicas: before } },
    });
    expect(again?.precondition).not.toHaveProperty('previous');
    expect(await replicas()).toBe(before);
    expect(await h.auditTypes(runId)).not.toContain('tool.started');
    expect((await h.run(url, runId)).status).toBe('awaiting_confirmation');
  });
});

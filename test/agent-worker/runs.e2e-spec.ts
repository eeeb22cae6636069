// The agent worker against a real Redis: tiers, parking, decisions (approve, deny, wrong fingerprint,
// forged, duplicated), manual steps, RBAC, SSE and validation. Restart counts on /demo/infra are the
// proof of what really ran.
import { JobName, jobIds, QueueName } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { infraKeys } from '@countersign/demo-infra';
import { runKey } from '../../apps/agent-worker/src/runs/run-keys';
import { post, restartScript, WorkerHarness } from '../support/agent-worker-harness';
import { bearer } from '../support/principals';
import { waitFor } from '../support/redis';
import { readSse, type SseEvent } from '../support/sse';

jest.setTimeout(30_000);

describe('agent worker', () => {
  const h = new WorkerHarness('worker');
  let worker: RunningAgentWorker;
  let url: string;

  beforeAll(async () => {
    worker = await h.startWorker();
    url = worker.url;
  });
  afterAll(() => h.cleanup());

  it('runs an auto call at once and completes without asking anyone', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'auto-1', name: 'get_service_status', args: { service: 'payments' } }] },
        { text: 'checked' },
      ],
    });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(view.result).toBe('checked');
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      toolCallId: 'auto-1',
      content: expect.stringContaining('"degraded"'),
    });
    expect(await h.approvalRequest('auto-1')).toBeUndefined();
  });

  it('parks a confirm call, publishes one approval request, and executes it once approved', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(url, { script: restartScript('api') });
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({ toolName: 'restart_service', args: { service: 'api' }, tier: 'confirm' });

    const request = await h.approvalRequest(call.callId);
    expect(request).toMatchObject({
      runId,
      requester: 'alice',
      fingerprint: call.fingerprint,
      reason: 'confirmation_required',
      attempt: 0,
    });
    expect(request!.toolDefinitionHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.restarts(url, 'api')).toBe(before);

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'api')).toBe(before + 1);
    expect(view.messages.filter((m) => m.role === 'assistant')).toHaveLength(2); // exactly one follow-up turn
    expect(await h.auditTypes(runId)).toEqual(
      expect.arrayContaining(['run.parked', 'decision.received', 'run.resumed', 'tool.executed']),
    );
  });

  it('tells the model the user refused, with the reason, and runs nothing', async () => {
    const before = await h.restarts(url, 'web');
    // No final text in the script: the scripted model answers with the results it was given.
    const runId = await h.startRun(url, {
      script: [{ toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] }],
    });
    const [call] = await h.waitForPending(url, runId);
    await h.publishDecision(h.decision(runId, call, 'deny', { reason: 'change freeze' }));

    const view = await h.waitForStatus(url, runId, 'completed');
    const toolMessage = view.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId);
    expect(toolMessage).toMatchObject({
      content: 'Tool execution was denied by the user. Reason: change freeze',
    });
    expect(view.result).toContain('denied by the user');
    expect(await h.restarts(url, 'web')).toBe(before);
    expect(await h.auditTypes(runId)).toContain('tool.denied');
  });

  it('needs one decision per call: two calls of one tool wait for two decisions', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(url, { script: restartScript('api', 'api') });
    const [first, second] = await h.waitForPending(url, runId, 2);

    const job = await h.publishDecision(h.decision(runId, first, 'approve'));
    expect(await h.settled(job)).toBe('completed');
    const view = await h.run(url, runId);
    expect(view.status).toBe('awaiting_confirmation');
    expect(view.pending.map((p) => p.callId)).toEqual([second.callId]);
    expect(await h.restarts(url, 'api')).toBe(before);

    await h.publishDecision(h.decision(runId, second, 'approve'));
    await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'api')).toBe(before + 2);
  });

  it('runs nothing of a turn that gives one call ID to two calls, asks no one, and tells the model', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(url, {
      script: [
        {
          toolCalls: [
            { id: 'twice', name: 'restart_service', args: { service: 'api' } },
            { id: 'twice', name: 'get_service_status', args: { service: 'api' } },
          ],
        },
        { text: 'after' },
      ],
    });
    const view = await h.waitForStatus(url, runId, 'completed');
    const results = view.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.role === 'tool' && m.toolCallId)).toEqual(['twice', 'twice']);
    for (const m of results)
      expect(m.content).toMatch(/^Nothing in this turn ran: call ID "twice" was given to more than one/);
    expect(await h.approvalRequest('twice')).toBeUndefined();
    expect(await h.auditTypes(runId)).not.toContain('run.parked');
    expect(await h.restarts(url, 'api')).toBe(before);
  });

  it('ignores a decision whose fingerprint does not match the call, and says what differed', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(url, { script: restartScript('api') });
    const [call] = await h.waitForPending(url, runId);

    const wrong = h.decision(runId, call, 'approve', {
      shown: { toolName: 'restart_service', args: { service: 'web' } },
    });
    expect(await h.settled(await h.publishDecision(wrong))).toBe('completed');

    expect((await h.run(url, runId)).pending.map((p) => p.callId)).toEqual([call.callId]);
    expect(await h.restarts(url, 'api')).toBe(before);
    const ignored = (await h.audit.read({ runId })).find((e) => e.type === 'decision.ignored');
    expect(ignored?.detail).toMatchObject({
      reason: 'fingerprint_mismatch',
      expected: 'restart_service ␟ {"service":"api"}',
      shown: 'restart_service ␟ {"service":"web"}',
    });
  });

  it('rejects a forged decision, executes nothing, and still accepts the genuine one', async () => {
    const before = await h.restarts(url, 'payments');
    const runId = await h.startRun(url, { script: restartScript('payments') });
    const [call] = await h.waitForPending(url, runId);

    const forged = h.decision(runId, call, 'approve', {}, 'not-the-shared-secret');
    const forgedJob = await h.publishDecision(forged);
    expect(await h.settled(forgedJob)).toBe('failed');
    expect((await h.decisions.getJob(forgedJob.id!))?.failedReason).toContain('signature');
    const unsigned = { ...h.decision(runId, call, 'approve'), signature: undefined };
    expect(await h.settled(await h.publishDecision(unsigned))).toBe('failed');

    expect((await h.run(url, runId)).status).toBe('awaiting_confirmation');
    expect(await h.restarts(url, 'payments')).toBe(before);
    expect(await h.auditTypes(runId)).toContain('decision.rejected');

    await h.publishDecision(h.decision(runId, call, 'approve'));
    await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'payments')).toBe(before + 1);
  });

  it('executes a decision delivered five times exactly once', async () => {
    const before = await h.restarts(url, 'web');
    const runId = await h.startRun(url, { script: restartScript('web') });
    const [call] = await h.waitForPending(url, runId);

    const decision = h.decision(runId, call, 'approve');
    const jobs = await Promise.all([1, 2, 3, 4, 5].map(() => h.publishDecision(decision)));
    for (const job of jobs) expect(await h.settled(job)).toBe('completed');
    await h.waitForStatus(url, runId, 'completed');

    expect(await h.restarts(url, 'web')).toBe(before + 1);
    expect((await h.auditTypes(runId)).filter((t) => t === 'tool.executed')).toHaveLength(1);
  });

  it('never runs a manual_only call: the model is told and approvers get a manual-step notice', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'manual-1', name: 'delete_volume', args: { volume: 'scratch' } }] },
        { text: 'asked a human' },
      ],
    });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: expect.stringContaining('must be done by a person'),
    });
    expect((await h.infra(url)).volumes.map((v) => v.name)).toContain('scratch');
    expect(await h.approvalRequest('manual-1')).toMatchObject({
      tier: 'manual_only',
      reason: 'manual_step',
      args: { volume: 'scratch' },
    });
  });

  it('refuses a tool the user lacks permission for, without asking anyone', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(
      url,
      {
        script: [
          { toolCalls: [{ id: 'rbac-1', name: 'restart_service', args: { service: 'api' } }] },
          { text: 'tried' },
        ],
      },
      'mallory',
    );
    const view = await h.waitForStatus(url, runId, 'completed', 'run completed', 'mallory');
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: expect.stringContaining('lacks permission "tool:restart_service"'),
    });
    expect(await h.approvalRequest('rbac-1')).toBeUndefined();
    expect(await h.restarts(url, 'api')).toBe(before);
  });

  it('runs the built-in ops runbook when no script is given (restarts the degraded service after approval)', async () => {
    await h.redis.hset(infraKeys(h.prefixes.keyPrefix).services, 'payments:status', 'degraded');
    const before = await h.restarts(url, 'payments');
    const runId = await h.startRun(url, {});
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({ toolName: 'restart_service', args: { service: 'payments' } });
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'payments')).toBe(before + 1);
  });

  it('starts a run from a message on agent-runs', async () => {
    await h.runs.add(JobName.StartRun, {
      runId: 'queued-run-1',
      agent: 'ops',
      userId: 'alice',
      input: 'status',
      script: [{ text: 'hello' }],
    });
    const view = await h.waitForStatus(url, 'queued-run-1', 'completed');
    expect(view.result).toBe('hello');
  });

  it('shows a run no worker has claimed yet as queued, from its start job (POST /runs writes only the job)', async () => {
    // Delayed, so no worker takes it during the test.
    await h.runs.add(
      JobName.StartRun,
      { runId: 'not-yet-claimed', agent: 'ops', userId: 'alice', input: 'later', script: [{ text: 'x' }] },
      { jobId: jobIds.startRun('not-yet-claimed'), delay: 600_000 },
    );
    const res = await fetch(`${url}/runs/not-yet-claimed`, { headers: bearer('alice') });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      runId: 'not-yet-claimed',
      status: 'queued',
      pending: [],
      messages: [{ role: 'user', content: 'later' }],
    });
    expect(await h.redis.exists(runKey(h.prefixes.keyPrefix, 'not-yet-claimed'))).toBe(0);
    expect((await fetch(`${url}/runs/no-such-run`, { headers: bearer('alice') })).status).toBe(404);
  });

  it('shows a run whose start job failed for good before any worker claimed it as failed, with the reason', async () => {
    const jobId = jobIds.startRun('failed-before-claim');
    await h.runs.add(
      JobName.StartRun,
      { runId: 'failed-before-claim', agent: 'ops', userId: 'alice', input: 'x', script: [{ text: 'x' }] },
      { jobId, delay: 600_000 },
    );
    // What BullMQ leaves when a job fails with no retry left: in the failed set, with its reason.
    const key = (name: string) => `${h.prefixes.queuePrefix}:${QueueName.AgentRuns}:${name}`;
    await h.redis.zrem(key('delayed'), jobId);
    await h.redis.zadd(key('failed'), Date.now(), jobId);
    await h.redis.hset(key(jobId), 'failedReason', 'Redis went away');
    expect(
      await (await fetch(`${url}/runs/failed-before-claim`, { headers: bearer('alice') })).json(),
    ).toMatchObject({
      status: 'failed',
      error: 'Redis went away',
    });
  });

  it('streams a parked run over SSE: what happened before the viewer came, then live, numbered without gaps or duplicates', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ id: 'sse-auto', name: 'get_service_status', args: { service: 'web' } }] },
        ...restartScript('web')!,
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    const events: SseEvent[] = [];
    const ended = readSse(`${url}/runs/${runId}/events`, events);
    // Everything up to the park happened before this viewer connected.
    await waitFor(
      () => events.some((e) => e.event === 'status' && e.data.status === 'awaiting_confirmation'),
      'park',
    );
    expect(events.map((e) => e.event)).toEqual(['status', 'tool_result', 'tool_confirmation', 'status']);
    expect(events[1].data).toMatchObject({ callId: 'sse-auto', outcome: 'executed' });
    expect(events[2].data).toMatchObject({ call: { callId: call.callId, fingerprint: call.fingerprint } });

    await h.publishDecision(h.decision(runId, call, 'approve'));
    await ended;
    expect(events.map((e) => e.event)).toEqual([
      ...['status', 'tool_result', 'tool_confirmation', 'status'],
      ...['decision', 'status', 'tool_result', 'text', 'status', 'done'],
    ]);
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    // The decision comes first, then the run is running again: a viewer sees who decided.
    expect(events[4].data).toMatchObject({
      callId: call.callId,
      toolName: 'restart_service',
      decision: 'approve',
    });
    expect(events[6].data).toMatchObject({ callId: call.callId, outcome: 'executed' });
  });

  it("replays a finished run's whole history to a late viewer and ends; after Last-Event-ID only what follows", async () => {
    const runId = await h.startRun(url, {
      script: [{ toolCalls: [{ id: 'late-auto', name: 'list_services', args: {} }] }, { text: 'listed' }],
    });
    await h.waitForStatus(url, runId, 'completed');

    const all: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, all);
    expect(all.map((e) => [e.id, e.event])).toEqual([
      ['1', 'status'],
      ['2', 'tool_result'],
      ['3', 'text'],
      ['4', 'status'],
      ['5', 'done'],
    ]);
    expect(all[1].data).toMatchObject({ runId, callId: 'late-auto', toolName: 'list_services' });
    expect(all[4].data).toEqual({ type: 'done', runId, status: 'completed', result: 'listed' });

    const rest: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, rest, { 'Last-Event-ID': '3' });
    expect(rest.map((e) => e.id)).toEqual(['4', '5']);
    const none: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, none, { 'Last-Event-ID': '5' });
    expect(none).toEqual([]);
  });

  it('answers 400 naming the Last-Event-ID header when it is not an event number', async () => {
    const runId = await h.startRun(url, { script: [{ text: 'hi' }] });
    await h.waitForStatus(url, runId, 'completed');
    const response = await fetch(`${url}/runs/${runId}/events`, {
      headers: { 'Last-Event-ID': 'abc', ...bearer('alice') },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('Last-Event-ID');
  });

  it('keeps invalid queue messages in the failed set with an error naming the field, and keeps working', async () => {
    const badRun = await h.runs.add(JobName.StartRun, { runId: 'bad-run', userId: 'alice', input: 'x' });
    const badDecision = await h.decisions.add(JobName.Decision, {
      callId: 'c',
      runId: 'r',
      decision: 'maybe',
    });
    const unknownName = await h.decisions.add('approval.whatever', { callId: 'c' });

    const failedReason = (queue: typeof h.runs, id: string) =>
      waitFor(async () => (await queue.getJob(id))?.failedReason, `job ${id} to fail`);
    expect(await failedReason(h.runs, badRun.id!)).toMatch(/agent: /);
    const decisionReason = await failedReason(h.decisions, badDecision.id!);
    expect(decisionReason).toMatch(/decision: /);
    expect(decisionReason).toMatch(/fingerprint: /);
    expect(await failedReason(h.decisions, unknownName.id!)).toContain('approval.whatever');
    expect(await h.decisions.getJobState(badDecision.id!)).toBe('failed');

    const runId = await h.startRun(url, { script: [{ text: 'still here' }] });
    expect((await h.waitForStatus(url, runId, 'completed')).result).toBe('still here');
  });

  it.each([
    [
      { agent: 'ops', input: 'x', userId: 'alice' },
      'userId: is not accepted: the requester is the authenticated caller',
    ],
    [{ agent: 'ops' }, 'input'],
    [{ agent: 'nope', input: 'x' }, 'agent'],
    [{ agent: 'ops', input: 'x', script: [{ toolCalls: [] }] }, 'script.0'],
    [{ agent: 'ops', onBehalfOf: 'bad:id', input: 'x' }, 'onBehalfOf'],
  ])('answers 400 naming the bad field of POST /runs %#', async (body, field) => {
    const response = await post(`${url}/runs`, body);
    expect(response.status).toBe(400);
    expect((response.body as { message: string }).message).toContain(`${field}`);
  });

  it('answers 404 for an unknown run and 400 naming runId for a malformed one', async () => {
    expect((await fetch(`${url}/runs/no-such-run`, { headers: bearer('alice') })).status).toBe(404);
    const bad = await fetch(`${url}/runs/${encodeURIComponent('a:b')}`, { headers: bearer('alice') });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('runId');
  });

  it('reports health and Prometheus metrics', async () => {
    expect(await (await fetch(`${url}/health`)).json()).toEqual({
      status: 'ok',
      redis: 'up',
      queues: 'running',
      parkedCallsWithoutRequest: 0,
    });
    const text = await (await fetch(`${url}/metrics`, { headers: bearer('scraper') })).text();
    expect(text).toMatch(/countersign_runs_resumed_total [1-9]/);
    expect(text).toContain('countersign_decision_to_resume_seconds_bucket');
    expect(text).toMatch(/countersign_tool_calls_total\{outcome="executed"\} [1-9]/);
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).toMatch(/^countersign_parked_calls_without_request 0$/m);
  });
});

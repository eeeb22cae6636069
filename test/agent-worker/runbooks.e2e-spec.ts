// Runbooks on a real worker and a real Redis: an agent step's confirm-tier call parks the runbook before it runs, a
// fan-out keeps its finished branch after the approval, a sub-runbook's confirmation, denied edges, and definitions
// refused at start-up or on submission. Restart counts on /demo/infra and audit entries are the proof of what ran.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunView } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { infraKeys } from '@countersign/demo-infra';
import { post, WorkerHarness } from '../support/agent-worker-harness';
import { waitFor } from '../support/redis';
import { readSse, type SseEvent } from '../support/sse';

jest.setTimeout(30_000);

const TEST_RUNBOOKS = 'test/support/runbooks';

describe('runbooks', () => {
  const h = new WorkerHarness('runbooks');
  let worker: RunningAgentWorker;
  let url: string;

  beforeAll(async () => {
    worker = await h.startWorker({ RUNBOOKS_DIR: TEST_RUNBOOKS });
    url = worker.url;
  });
  afterAll(() => h.cleanup());

  async function startRunbook(
    name: string,
    input: Record<string, unknown> = {},
    as = 'alice',
  ): Promise<string> {
    const response = await post(`${url}/runbooks/${name}/runs`, { input }, as);
    if (response.status !== 202)
      throw new Error(
        `POST /runbooks/${name}/runs answered ${response.status}: ${JSON.stringify(response.body)}`,
      );
    return (response.body as { runId: string }).runId;
  }

  /** Makes a service unhealthy again (the scripted ops agent restarts only unhealthy services). */
  async function degrade(service: string): Promise<void> {
    await h.redis.hset(infraKeys(h.prefixes.keyPrefix).services, `${service}:status`, 'degraded');
  }

  /** Executions of a call, as the audit log has them (auto calls are audited once they ran). */
  async function executions(runId: string, callId: string): Promise<number> {
    return (await h.audit.read({ runId })).filter((e) => e.type === 'tool.executed' && e.callId === callId)
      .length;
  }

  it('pauses an agent step before its confirm-tier tool runs, shows the call, and runs it once after the approval', async () => {
    await degrade('payments');
    const before = await h.restarts(url, 'payments');
    const runId = await startRunbook('triage');
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({
      toolName: 'restart_service',
      args: { service: 'payments' },
      tier: 'confirm',
      callId: expect.stringMatching(/^rb\.investigate@call_/),
    });

    // GET shows where the graph is: the agent step waits on that call.
    const parked = await h.run(url, runId);
    expect(parked.runbook).toMatchObject({
      name: 'triage',
      position: ['investigate'],
      nodes: [
        {
          path: 'investigate',
          kind: 'agent',
          status: 'waiting',
          callIds: expect.arrayContaining([call.callId]),
        },
      ],
    });
    // The pause event: tool name, arguments and call ID.
    const paused = await history(runId);
    expect(paused).toContainEqual(
      expect.objectContaining({
        event: 'tool_confirmation',
        data: expect.objectContaining({
          call: expect.objectContaining({
            callId: call.callId,
            toolName: 'restart_service',
            args: { service: 'payments' },
          }),
        }),
      }),
    );
    expect(await h.restarts(url, 'payments')).toBe(before);
    const request = await h.approvalRequest(call.callId);
    expect(request?.context?.step).toBe('step 1 of 2 of triage');

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const done = await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'payments')).toBe(before + 1);
    expect(done.runbook?.nodes.map((n) => `${n.path}:${n.status}`)).toEqual([
      'investigate:done',
      'report:done',
    ]);
    // The agent's final text went to the `summary` channel (the scripted agent reports the restart's result).
    expect(done.runbook?.state.summary).toEqual(expect.stringContaining('"restarts":1'));

    const events = await history(runId);
    const transitions = events
      .filter((e) => e.event === 'node')
      .map((e) => `${e.data.node}:${e.data.status}`);
    expect(transitions).toEqual(['investigate:running', 'investigate:done', 'report:running', 'report:done']);
  });

  it('never runs the tool of an agent step without an approval', async () => {
    await degrade('payments');
    const before = await h.restarts(url, 'payments');
    const runId = await startRunbook('triage');
    const [call] = await h.waitForPending(url, runId);
    // A decision for another call ID is no decision for this one.
    await h.settled(
      await h.publishDecision(h.decision(runId, { ...call, callId: 'rb.investigate@other' }, 'approve')),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await h.run(url, runId)).status).toBe('awaiting_confirmation');
    expect(await h.restarts(url, 'payments')).toBe(before);
  });

  it('keeps the finished branch of a fan-out: after the approval it is not run again', async () => {
    await degrade('payments');
    const before = await h.restarts(url, 'payments');
    const runId = await startRunbook('fanout');
    const [call] = await h.waitForPending(url, runId);
    expect(call.callId).toBe('rb.split.restart@1');
    const parked = await h.run(url, runId);
    expect(statuses(parked)).toMatchObject({
      split: 'running',
      'split/check': 'done',
      'split/remember': 'done',
      'split/restart': 'waiting',
    });
    // The finished branch's next read waits for the turn it is in to settle (one follow-up turn per frontier).
    expect(statuses(parked)).not.toHaveProperty('split/note');
    expect(parked.runbook?.position).toEqual(['split', 'split/restart']);
    expect(await executions(runId, 'rb.split.check@1')).toBe(1);

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const done = await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'payments')).toBe(before + 1);
    expect(await executions(runId, 'rb.split.check@1')).toBe(1);
    expect(await executions(runId, 'rb.split.note@1')).toBe(1);
    expect(await executions(runId, 'rb.split.restart@1')).toBe(1);
    expect(await executions(runId, 'rb.report@1')).toBe(1);
    // `status` was read before the restart (degraded, so the branch chose `note`), `health` after it.
    expect(done.runbook?.state).toMatchObject({
      service: 'payments',
      status: expect.objectContaining({ status: 'degraded' }),
      health: 'healthy',
    });
    expect(statuses(done)).toMatchObject({ split: 'done', report: 'done' });
  });

  it('parks on a confirmation inside a sub-runbook, and a denial there follows the denied edge', async () => {
    const before = await h.restarts(url, 'web');
    const runId = await startRunbook('rollout');
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({
      callId: 'rb.restart.restart@1',
      toolName: 'restart_service',
      args: { service: 'web' },
    });
    expect((await h.approvalRequest(call.callId))?.context?.step).toBe(
      'step 2 of 4 of rollout › step 1 of 2 of restart-one',
    );
    expect((await h.run(url, runId)).runbook?.position).toEqual(['restart', 'restart/restart']);

    await h.publishDecision(h.decision(runId, call, 'deny', { reason: 'not now' }));
    const rollback = await waitFor(async () => {
      const view = await h.run(url, runId);
      return view.pending.find((p) => p.callId === 'rb.rollback@1');
    }, 'the rollback step to wait for approval');
    expect(rollback).toMatchObject({ callId: 'rb.rollback@1', toolName: 'scale_service' });
    await h.publishDecision(h.decision(runId, rollback, 'approve'));
    const done = await h.waitForStatus(url, runId, 'completed');
    expect(statuses(done)).toMatchObject({
      check: 'done',
      restart: 'refused',
      'restart/restart': 'refused',
      rollback: 'done',
    });
    expect(statuses(done)).not.toHaveProperty('done');
    expect(await h.restarts(url, 'web')).toBe(before);
  });

  it('runs the sub-runbook through when its confirmation is approved, keeping its state under its node', async () => {
    const before = await h.restarts(url, 'api');
    const runId = await startRunbook('rollout', { service: 'api' });
    const [call] = await h.waitForPending(url, runId);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    const done = await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'api')).toBe(before + 1);
    const sub = done.runbook?.nodes.find((n) => n.path === 'restart');
    expect(sub).toMatchObject({
      status: 'done',
      output: { service: 'api', after: expect.objectContaining({ name: 'api' }) },
    });
    expect(statuses(done)).toMatchObject({ 'restart/verify': 'done', done: 'done' });
  });

  it('fails a runbook whose refused step has no denied edge', async () => {
    const runId = await startRunbook('fanout', { service: 'web' });
    const [call] = await h.waitForPending(url, runId);
    await h.publishDecision(h.decision(runId, call, 'deny'));
    const failed = await h.waitForStatus(url, runId, 'failed');
    expect(failed.error).toContain('runbook fanout: node "restart": Tool execution was denied by the user');
    expect(await executions(runId, 'rb.report@1')).toBe(0);
  });

  it('refuses a start with a state that does not fit the channels, naming the field', async () => {
    const wrong = await post(`${url}/runbooks/fanout/runs`, { input: { service: 3 } });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain('input.service');
    expect(JSON.stringify(wrong.body)).toContain('expected string, got number');
    const unknown = await post(`${url}/runbooks/nope/runs`, { input: {} });
    expect(unknown.status).toBe(404);
    const anonymous = await fetch(`${url}/runbooks/fanout/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: {} }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('refuses a submitted definition with the node and field named', async () => {
    const bad = await post(`${url}/runbooks/validate`, {
      definition: {
        name: 'broken',
        agent: 'ops',
        entry: 'a',
        nodes: {
          a: { kind: 'tool', tool: 'restart_service', args: { service: '{{state.nope}}' }, next: 'b' },
        },
      },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain(
      'runbook broken: node \\"a\\": field \\"next\\": no node \\"b\\"',
    );
    const good = await post(`${url}/runbooks/validate`, {
      definition: {
        name: 'fine',
        agent: 'ops',
        entry: 'a',
        nodes: { a: { kind: 'tool', tool: 'list_services' } },
      },
    });
    expect(good).toEqual({ status: 200, body: { valid: true, name: 'fine' } });
  });

  it('refuses to start with an invalid runbook file, naming the file, node and field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbooks-'));
    writeFileSync(
      join(dir, 'bad.yaml'),
      [
        'name: bad',
        'agent: ops',
        'entry: a',
        'nodes:',
        '  a: { kind: tool, tool: list_services, next: gone }',
      ].join('\n'),
    );
    await expect(h.startWorker({ RUNBOOKS_DIR: dir })).rejects.toThrow(
      /RUNBOOKS_DIR: .*\n.*runbook bad: node "a": field "next": no node "gone"/,
    );
    writeFileSync(
      join(dir, 'bad.yaml'),
      ['name: bad', 'agent: ops', 'entry: a', 'nodes:', '  a: { kind: tool, tool: launch_rockets }'].join(
        '\n',
      ),
    );
    await expect(h.startWorker({ RUNBOOKS_DIR: dir })).rejects.toThrow(
      'runbook bad: node "a": field "tool": "launch_rockets" is not a tool of agent "ops"',
    );
  });

  async function history(runId: string): Promise<SseEvent[]> {
    // The run's history replayed; the stream is cut after a moment when the run is still parked.
    const events: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, events, {}, { cutAfterMs: 700 });
    return events;
  }
});

function statuses(view: RunView): Record<string, string> {
  return Object.fromEntries((view.runbook?.nodes ?? []).map((n) => [n.path, n.status]));
}

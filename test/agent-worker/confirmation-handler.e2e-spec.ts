// Confirmation handlers through the running worker: a rules handler approving restarts in staging (no request, the
// audit and the run's stream name the handler and rule), denying with its reason, never deciding a manual-only call
// nor one a before-hook sent to people; a hook handler deciding, and falling back to people when it fails.
import type { ChatMessage, RunView } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { WorkerHarness } from '../support/agent-worker-harness';
import { HOOK_SECRET as SECRET, HookServer, type Reply } from '../support/hook-server';
import { writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';
import { readSse, type SseEvent } from '../support/sse';

jest.setTimeout(60_000);

const TOOLS = ['get_service_status', 'restart_service', 'scale_service', 'delete_volume'];
const RBAC = { roles: { operator: { allow: ['tool:*'] } }, users: { alice: ['operator'] } };

function config(hookBase: string): Record<string, unknown> {
  const rules = (env: string) => ({
    kind: 'rules',
    name: 'staging-auto',
    rules: [
      {
        name: 'staging-restarts',
        tools: ['restart_*'],
        when: { env: { DEPLOY_ENV: env } },
        decision: 'approve',
      },
      {
        name: 'payments-scaling',
        tools: ['scale_service'],
        when: { args: { service: 'payments' } },
        decision: 'deny',
        reason: 'payments is scaled by the finance team only',
      },
      // Would approve a manual-only call if the pipeline ever asked it: it must not.
      { name: 'any-delete', tools: ['delete_*'], decision: 'approve' },
    ],
  });
  return {
    agents: {
      ops: { tools: TOOLS, ...RBAC, confirmationHandler: rules('staging') },
      prod: { tools: TOOLS, ...RBAC, confirmationHandler: rules('production') },
      gated: {
        tools: TOOLS,
        ...RBAC,
        confirmationHandler: rules('staging'),
        admission: {
          beforeTool: [
            { name: 'gate', tools: ['*'], url: `${hookBase}/before`, secretEnv: 'ADMISSION_SECRET' },
          ],
        },
      },
      hooked: {
        tools: TOOLS,
        ...RBAC,
        confirmationHandler: {
          kind: 'hook',
          name: 'change-board',
          tools: ['restart_*', 'scale_*'],
          url: `${hookBase}/confirm`,
          secretEnv: 'ADMISSION_SECRET',
          timeoutMs: 500,
        },
      },
    },
  };
}

const toolContents = (view: RunView) =>
  view.messages
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool')
    .map((m) => m.content);

describe('confirmation handler (worker)', () => {
  const h = new WorkerHarness('conf-handler');
  const hook = new HookServer();
  let worker: RunningAgentWorker;
  let url: string;

  function start(agent: string, id: string, name: string, args: Record<string, unknown>): Promise<string> {
    return h.startRun(url, { agent, script: [{ toolCalls: [{ id, name, args }] }, { text: 'done' }] });
  }

  async function entries(callId: string) {
    return (await h.audit.read({ callId })).map((e) => ({ type: e.type, actor: e.actor, detail: e.detail }));
  }

  beforeAll(async () => {
    await hook.start();
    worker = await h.startWorker({
      AGENTS_CONFIG: writeConfig(config(`http://127.0.0.1:${hook.port}`)),
      ADMISSION_SECRET: SECRET,
      DEPLOY_ENV: 'staging',
    });
    url = worker.url;
  });
  afterEach(() => {
    hook.before = () => ({ json: { action: 'allow' } });
    hook.confirm = () => ({ json: { decision: 'ask' } });
  });
  afterAll(async () => {
    await h.cleanup();
    await hook.stop();
  });

  it('a rule approves a restart in staging: it runs with no request, audited and streamed as the handler’s', async () => {
    const before = await h.restarts(url, 'web');
    const runId = await start('ops', 'ch-approve', 'restart_service', { service: 'web' });
    await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'web')).toBe(before + 1);
    expect(await h.approvalRequests('ch-approve')).toEqual([]);
    const audit = await entries('ch-approve');
    expect(audit.filter((e) => e.type.startsWith('tool.'))).toEqual([
      expect.objectContaining({
        type: 'tool.started',
        actor: 'handler:staging-auto',
        detail: expect.objectContaining({ rule: 'staging-restarts' }),
      }),
      expect.objectContaining({ type: 'tool.executed', actor: 'handler:staging-auto' }),
    ]);
    // Never recorded as a person's decision.
    expect(audit.map((e) => e.type)).not.toContain('decision.received');
    const events: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, events);
    expect(events.find((e) => e.event === 'decision')?.data).toMatchObject({
      callId: 'ch-approve',
      decision: 'approve',
      decidedBy: 'policy',
      approvers: [],
      rule: 'staging-restarts',
      reason: 'approved by handler:staging-auto (rule staging-restarts)',
    });
  });

  it('the same rule outside staging does not match: people are asked', async () => {
    const runId = await start('prod', 'ch-prod', 'restart_service', { service: 'web' });
    await h.waitForPending(url, runId);
    expect(await waitFor(() => h.approvalRequest('ch-prod'), 'the request')).toMatchObject({
      toolName: 'restart_service',
      tier: 'confirm',
    });
  });

  it('a deny rule refuses the call with its reason, audited as the handler’s', async () => {
    const runId = await start('ops', 'ch-deny', 'scale_service', { service: 'payments', replicas: 3 });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolContents(view)[0]).toMatch(/payments is scaled by the finance team only/);
    expect(await h.approvalRequests('ch-deny')).toEqual([]);
    expect(await entries('ch-deny')).toContainEqual(
      expect.objectContaining({
        type: 'tool.denied',
        actor: 'handler:staging-auto',
        detail: expect.objectContaining({ rule: 'payments-scaling' }),
      }),
    );
    const events: SseEvent[] = [];
    await readSse(`${url}/runs/${runId}/events`, events);
    expect(events.find((e) => e.event === 'decision')?.data).toMatchObject({
      decision: 'deny',
      decidedBy: 'policy',
      rule: 'payments-scaling',
    });
  });

  it('never decides a manual-only call: a person is told the manual step is due', async () => {
    const runId = await start('ops', 'ch-manual', 'delete_volume', { volume: 'scratch' });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolContents(view)[0]).toMatch(/must be done by a person/);
    expect(await waitFor(() => h.approvalRequest('ch-manual'), 'the notice')).toMatchObject({
      tier: 'manual_only',
    });
    const actors = (await entries('ch-manual')).map((e) => e.actor);
    expect(actors).not.toContain('handler:staging-auto');
  });

  it('never decides a call a before-hook sent to people', async () => {
    hook.before = () => ({ json: { action: 'confirm', groups: ['ops'] } });
    const before = await h.restarts(url, 'api');
    const runId = await start('gated', 'ch-gated', 'restart_service', { service: 'api' });
    await h.waitForPending(url, runId);
    expect(await waitFor(() => h.approvalRequest('ch-gated'), 'the request')).toMatchObject({
      admission: { hook: 'gate', groups: ['ops'] },
    });
    expect(await h.restarts(url, 'api')).toBe(before);
    expect((await entries('ch-gated')).map((e) => e.actor)).not.toContain('handler:staging-auto');
  });

  it('a hook handler approves: the call runs, the hook got it signed, the audit names the handler', async () => {
    hook.confirm = () => ({ json: { decision: 'approve' } });
    const before = await h.restarts(url, 'api');
    const runId = await start('hooked', 'ch-hook-ok', 'restart_service', { service: 'api' });
    await h.waitForStatus(url, runId, 'completed');
    expect(await h.restarts(url, 'api')).toBe(before + 1);
    expect(hook.forRun(runId)).toEqual([
      expect.objectContaining({
        stage: 'confirmation',
        tool: 'restart_service',
        principal: 'alice',
        signed: true,
      }),
    ]);
    const audit = await entries('ch-hook-ok');
    expect(audit).toContainEqual(
      expect.objectContaining({ type: 'tool.executed', actor: 'handler:change-board' }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({
        type: 'admission.answered',
        detail: expect.objectContaining({ stage: 'confirmation', outcome: 'approve' }),
      }),
    );
    expect(await h.approvalRequests('ch-hook-ok')).toEqual([]);
  });

  it('a hook handler denies: the call is refused with its reason', async () => {
    hook.confirm = () => ({ json: { decision: 'deny', reason: 'change board: no restarts on Fridays' } });
    const runId = await start('hooked', 'ch-hook-deny', 'restart_service', { service: 'api' });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolContents(view)[0]).toMatch(/no restarts on Fridays/);
    expect(await entries('ch-hook-deny')).toContainEqual(
      expect.objectContaining({ type: 'tool.denied', actor: 'handler:change-board' }),
    );
  });

  it.each<[string, Reply, RegExp]>([
    ['times out', 'hang', /timed out after 500 ms/],
    ['answers 500', { status: 500, raw: 'boom' }, /answered HTTP 500/],
  ])('a hook handler that %s asks a person: the request is published', async (_case, reply, why) => {
    hook.confirm = () => reply;
    const callId = `ch-hook-${reply === 'hang' ? 'hang' : '500'}`;
    const before = await h.restarts(url, 'api');
    const runId = await start('hooked', callId, 'restart_service', { service: 'api' });
    await h.waitForPending(url, runId);
    expect(await waitFor(() => h.approvalRequest(callId), 'the request')).toMatchObject({
      toolName: 'restart_service',
      tier: 'confirm',
    });
    expect(await h.restarts(url, 'api')).toBe(before);
    const actors = (await entries(callId)).map((e) => e.actor);
    expect(actors).not.toContain('handler:change-board');
    if (reply !== 'hang')
      expect(await entries(callId)).toContainEqual(
        expect.objectContaining({
          type: 'admission.failed',
          detail: expect.objectContaining({ stage: 'confirmation', reason: expect.stringMatching(why) }),
        }),
      );
  });
});

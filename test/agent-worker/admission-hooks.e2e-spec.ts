// Admission hooks through the running worker, against a real local hook server that checks the signature of every
// request it gets: before-tool answers (allow, skip, deny, confirm, abort), each way a hook fails (refused), after-tool
// answers (replace, and a failure that keeps the result), and the order of the stages.
import type { ChatMessage, RunView } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { WorkerMetrics } from '../../apps/agent-worker/src/core/worker-metrics';
import { WorkerHarness } from '../support/agent-worker-harness';
import { closedPort, HOOK_SECRET as SECRET, HookServer, type Reply } from '../support/hook-server';
import { writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';

jest.setTimeout(60_000);

function config(hookBase: string, unreachable: string): Record<string, unknown> {
  const agent = (before: string) => ({
    tools: ['get_service_status', 'list_services', 'restart_service'],
    roles: { operator: { allow: ['tool:*'] }, viewer: { allow: ['tool:get_service_status'] } },
    users: { alice: ['operator'], mallory: ['viewer'] },
    admission: {
      beforeTool: [
        { name: 'gate', tools: ['*'], url: before, secretEnv: 'ADMISSION_SECRET', timeoutMs: 1_000 },
      ],
      afterTool: [
        {
          name: 'redactor',
          tools: ['get_service_status', 'restart_service'],
          url: `${hookBase}/after`,
          secretEnv: 'ADMISSION_SECRET',
          timeoutMs: 1_000,
        },
      ],
    },
  });
  return { agents: { ops: agent(`${hookBase}/before`), offline: agent(unreachable) } };
}

const toolContents = (view: RunView) =>
  view.messages
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool')
    .map((m) => m.content);

describe('admission hooks (worker)', () => {
  const h = new WorkerHarness('admission');
  const hook = new HookServer();
  let worker: RunningAgentWorker;
  let url: string;

  async function oneCall(
    call: { name: string; args: Record<string, unknown> },
    status: RunView['status'] = 'completed',
    agent = 'ops',
  ): Promise<RunView & { runId: string }> {
    const runId = await h.startRun(url, { agent, script: [{ toolCalls: [call] }, { text: 'done' }] });
    return { ...(await h.waitForStatus(url, runId, status)), runId };
  }

  async function auditOf(runId: string) {
    return (await h.audit.read({ runId })).filter((e) => e.type.startsWith('admission.'));
  }

  beforeAll(async () => {
    await hook.start();
    const deadPort = await closedPort();
    worker = await h.startWorker({
      AGENTS_CONFIG: writeConfig(
        config(`http://127.0.0.1:${hook.port}`, `http://127.0.0.1:${deadPort}/before`),
      ),
      ADMISSION_SECRET: SECRET,
    });
    url = worker.url;
  });
  afterEach(() => {
    hook.before = () => ({ json: { action: 'allow' } });
    hook.after = () => ({ json: { action: 'keep' } });
  });
  afterAll(async () => {
    await h.cleanup();
    await hook.stop();
  });

  it('refuses to start when a hook secret is not set, naming the field and the variable', async () => {
    await expect(
      h.startWorker({
        AGENTS_CONFIG: writeConfig(config('http://127.0.0.1:1', 'http://127.0.0.1:1')),
        ADMISSION_SECRET: '',
      }),
    ).rejects.toThrow(/agents\.ops\.admission\.beforeTool\[0\]\.secretEnv: ADMISSION_SECRET .*is not set/);
  });

  it('allow: the tool runs; the hook got the call, signed, with its fingerprint, principal, agent, run and call', async () => {
    const view = await oneCall({ name: 'get_service_status', args: { service: 'api' } });
    expect(JSON.parse(toolContents(view)[0])).toMatchObject({ name: 'api' });
    const [before] = hook.forRun(view.runId).filter((c) => c.stage === 'before_tool');
    expect(before).toMatchObject({
      signed: true,
      tool: 'get_service_status',
      arguments: { service: 'api' },
      principal: 'alice',
      agent: 'ops',
      runId: view.runId,
    });
    expect(before.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const audit = await auditOf(view.runId);
    expect(audit.map((e) => [e.type, e.detail.stage, e.detail.outcome])).toEqual([
      ['admission.answered', 'before_tool', 'allow'],
      ['admission.answered', 'after_tool', 'keep'],
    ]);
    const metric = await worker.app
      .get(WorkerMetrics)
      .registry.getSingleMetricAsString('countersign_admission_hook_seconds');
    expect(metric).toMatch(
      /countersign_admission_hook_seconds_count\{hook="gate",stage="before_tool",outcome="allow"\} [1-9]/,
    );
  });

  it('skip: the model gets the hook content and the tool never runs', async () => {
    hook.before = () => ({ json: { action: 'skip', content: 'restart skipped: already restarted today' } });
    const before = await h.restarts(url, 'web');
    const view = await oneCall({ name: 'restart_service', args: { service: 'web' } });
    expect(toolContents(view)).toEqual(['restart skipped: already restarted today']);
    expect(await h.restarts(url, 'web')).toBe(before);
    expect(await h.approvalRequests(callIdOf(view))).toEqual([]);
  });

  it('deny: the call is refused with the reason and audited', async () => {
    hook.before = () => ({ json: { action: 'deny', reason: 'change freeze until Monday' } });
    const view = await oneCall({ name: 'get_service_status', args: { service: 'api' } });
    expect(toolContents(view)[0]).toMatch(/guard "gate" denied it: change freeze until Monday/);
    expect(hook.forRun(view.runId).map((c) => c.stage)).toEqual(['before_tool']);
    expect(await h.auditTypes(view.runId)).toContain('tool.denied');
  });

  it('confirm: an auto call waits for people; the request names the hook, group and quorum', async () => {
    hook.before = () => ({ json: { action: 'confirm', groups: ['finance'], quorum: 2 } });
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ name: 'get_service_status', args: { service: 'payments' } }] },
        { text: 'done' },
      ],
    });
    const [pending] = await h.waitForPending(url, runId);
    expect(pending).toMatchObject({ toolName: 'get_service_status', tier: 'confirm' });
    const request = await waitFor(() => h.approvalRequest(pending.callId), 'the request');
    expect(request).toMatchObject({
      tier: 'confirm',
      admission: { hook: 'gate', groups: ['finance'], quorum: 2 },
    });
    // Approved, it runs: the hook is asked again as the call resumes, and still asks for people, who said yes.
    await h.publishDecision(h.decision(runId, pending, 'approve'));
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(JSON.parse(toolContents(view)[0])).toMatchObject({ name: 'payments' });
  });

  it('abort: the run ends failed, nothing of the turn runs and the model is not asked again', async () => {
    hook.before = (call) =>
      call.tool === 'restart_service'
        ? { json: { action: 'abort', reason: 'incident declared' } }
        : { json: { action: 'allow' } };
    const before = await h.restarts(url, 'api');
    const runId = await h.startRun(url, {
      script: [
        {
          toolCalls: [
            { name: 'restart_service', args: { service: 'api' } },
            { name: 'get_service_status', args: { service: 'api' } },
          ],
        },
        { toolCalls: [{ name: 'list_services', args: {} }] },
        { text: 'done' },
      ],
    });
    const view = await h.waitForStatus(url, runId, 'failed');
    expect(view.error).toMatch(/Run aborted by "gate": incident declared/);
    expect(await h.restarts(url, 'api')).toBe(before);
    // No tool of the turn ran (no after-hook), and the next turn's list_services was never asked about.
    expect(hook.forRun(runId).filter((c) => c.stage === 'after_tool')).toEqual([]);
    expect(hook.forRun(runId).map((c) => c.tool)).not.toContain('list_services');
  });

  it('abort as an approved call resumes: the run ends failed and the call does not run', async () => {
    const runId = await h.startRun(url, {
      script: [
        { toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] },
        { toolCalls: [{ name: 'list_services', args: {} }] },
        { text: 'done' },
      ],
    });
    const [pending] = await h.waitForPending(url, runId);
    const before = await h.restarts(url, 'web');
    hook.before = (call) =>
      call.tool === 'restart_service'
        ? { json: { action: 'abort', reason: 'incident declared meanwhile' } }
        : { json: { action: 'allow' } };
    await h.publishDecision(h.decision(runId, pending, 'approve'));
    const view = await h.waitForStatus(url, runId, 'failed');
    expect(view.error).toMatch(/Run aborted by "gate": incident declared meanwhile/);
    expect(await h.restarts(url, 'web')).toBe(before);
    expect(hook.forRun(runId).map((c) => c.tool)).not.toContain('list_services');
  });

  it.each<[string, Reply | 'unreachable', RegExp]>([
    ['times out', 'hang', /timed out after 1000 ms/],
    ['answers 500', { status: 500, raw: 'boom' }, /answered HTTP 500/],
    ['answers a body that is not JSON', { status: 200, raw: 'allow!' }, /not JSON/],
    ['answers JSON that is no answer', { json: { action: 'maybe' } }, /bad body \(action: /],
    ['is unreachable', 'unreachable', /unreachable \(ECONNREFUSED\)/],
  ])(
    'refuses the call when the hook %s, tells the model and audits the failure',
    async (_case, reply, why) => {
      if (reply !== 'unreachable') hook.before = () => reply;
      const agent = reply === 'unreachable' ? 'offline' : 'ops';
      const before = await h.restarts(url, 'api');
      const runId = await h.startRun(url, {
        agent,
        script: [{ toolCalls: [{ name: 'restart_service', args: { service: 'api' } }] }, { text: 'done' }],
      });
      const view = await h.waitForStatus(url, runId, 'completed');
      expect(toolContents(view)[0]).toMatch(/was refused: guard "gate" failed \(admission hook /);
      expect(toolContents(view)[0]).toMatch(why);
      expect(await h.restarts(url, 'api')).toBe(before);
      expect(await h.approvalRequests(callIdOf(view))).toEqual([]);
      const audit = await auditOf(runId);
      expect(audit).toEqual([
        expect.objectContaining({
          type: 'admission.failed',
          actor: 'hook:gate',
          detail: expect.objectContaining({ stage: 'before_tool', reason: expect.stringMatching(why) }),
        }),
      ]);
    },
  );

  it('after-tool: a replaced result is what the model gets', async () => {
    hook.after = (call) => ({
      json: { action: 'replace', result: { ...(call.result as object), replicas: '[redacted]' } },
    });
    const view = await oneCall({ name: 'get_service_status', args: { service: 'web' } });
    expect(JSON.parse(toolContents(view)[0])).toMatchObject({ name: 'web', replicas: '[redacted]' });
    const after = hook.forRun(view.runId).find((c) => c.stage === 'after_tool')!;
    expect(after.result).toMatchObject({ name: 'web', replicas: 2 });
    // The replaced result is not copied into the audit.
    const answered = (await auditOf(view.runId)).find((e) => e.detail.stage === 'after_tool')!;
    expect(answered.detail).toMatchObject({ outcome: 'replace', answer: { action: 'replace' } });
  });

  it.each<[string, Reply]>([
    ['answers 500', { status: 500, raw: 'boom' }],
    ['times out', 'hang'],
  ])('after-tool: a hook that %s leaves the tool result, audited as failed', async (_case, reply) => {
    hook.after = () => reply;
    const view = await oneCall({ name: 'get_service_status', args: { service: 'web' } });
    expect(JSON.parse(toolContents(view)[0])).toMatchObject({ name: 'web', replicas: 2 });
    const failed = (await auditOf(view.runId)).filter((e) => e.type === 'admission.failed');
    expect(failed).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ stage: 'after_tool' }) }),
    ]);
  });

  it('runs the stages in order: RBAC → before-hook → confirmation → tool → after-hook', async () => {
    // RBAC first: a viewer's restart is refused without asking the hook.
    const denied = await h.startRun(
      url,
      {
        script: [
          { toolCalls: [{ name: 'restart_service', args: { service: 'payments' } }] },
          { text: 'done' },
        ],
      },
      'mallory',
    );
    const deniedView = await h.waitForStatus(url, denied, 'completed', 'run completed', 'mallory');
    expect(toolContents(deniedView)[0]).toMatch(/permission|not allowed|may not/i);
    expect(hook.forRun(denied)).toEqual([]);

    hook.stages.length = 0;
    const restarts = await h.restarts(url, 'payments');
    hook.after = async () => {
      hook.stages.push(`tool ran: ${(await h.restarts(url, 'payments')) - restarts} restart(s)`);
      return { json: { action: 'keep' } };
    };
    const runId = await h.startRun(url, {
      script: [{ toolCalls: [{ name: 'restart_service', args: { service: 'payments' } }] }, { text: 'done' }],
    });
    const [pending] = await h.waitForPending(url, runId);
    await waitFor(() => h.approvalRequest(pending.callId), 'the request');
    hook.stages.push(`confirmation requested (${(await h.restarts(url, 'payments')) - restarts} restarts)`);
    await h.publishDecision(h.decision(runId, pending, 'approve'));
    await h.waitForStatus(url, runId, 'completed');
    expect(hook.stages).toEqual([
      'before restart_service',
      'confirmation requested (0 restarts)',
      // Asked again as the approved call resumes, then the tool, then the after-hook (which saw it had run).
      'before restart_service',
      'after restart_service',
      'tool ran: 1 restart(s)',
    ]);
  });
});

function callIdOf(view: RunView): string {
  const assistant = view.messages.find((m) => m.role === 'assistant');
  return assistant?.role === 'assistant' ? (assistant.toolCalls?.[0]?.id ?? '') : '';
}

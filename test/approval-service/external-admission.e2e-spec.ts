// Admission hooks of the approvals API (APPROVALS_CONFIG admission.beforeTool), through the running approval service
// and a real local hook server that checks the signature of every request it gets: allow (asked as usual), deny
// (decided at once in the hook's name, nobody asked, claim refused, webhook sent), confirm naming a group and a quorum
// (only that group decides, two approvals needed), and a hook failing (500, timeout) deciding deny (fail closed).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fingerprint } from '@countersign/authorization';
import { ExternalApprovalViewSchema, type ExternalApprovalView } from '@countersign/contracts';
import { loadApprovalServiceConfig } from '../../apps/approval-service/src/config/approval-service.config';
import { approvalServiceEnv } from '../support/approval-harness';
import { EXTERNAL_APPROVALS, ExternalHarness } from '../support/external-harness';
import { approvers, group } from '../support/fixtures';
import { HOOK_SECRET, HookServer, type Reply } from '../support/hook-server';
import { uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

/** Collects the approvals API's webhook deliveries. */
class WebhookReceiver {
  readonly bodies: string[] = [];
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const ARGS = { orderId: '77', amount: 2_500 };

function withHook(hookUrl: string) {
  return {
    ...EXTERNAL_APPROVALS,
    approvers: approvers('bob', 'carol', 'dave'),
    groups: [...EXTERNAL_APPROVALS.groups, group('finance', ['carol', 'dave'])],
    admission: {
      beforeTool: [
        {
          name: 'gate',
          tools: ['refund_*'],
          url: hookUrl,
          secretEnv: 'SUBMISSION_HOOK_SECRET',
          timeoutMs: 500,
        },
      ],
    },
  };
}

describe('admission hooks of the approvals API', () => {
  const hook = new HookServer();
  const receiver = new WebhookReceiver();
  let harness: ExternalHarness;
  let receiverUrl: string;
  let run = 0;

  beforeAll(async () => {
    await hook.start();
    receiverUrl = await receiver.start();
    harness = await ExternalHarness.start(
      'external-admission',
      { SUBMISSION_HOOK_SECRET: HOOK_SECRET, WEBHOOK_ALLOWED_ORIGINS: receiverUrl },
      withHook(`http://127.0.0.1:${hook.port}/before`),
    );
  });
  afterEach(() => {
    hook.before = () => ({ json: { action: 'allow' } });
  });
  afterAll(async () => {
    await harness?.close();
    await hook.stop();
    await receiver.stop();
  });

  /** Submits a refund as agent-bot (with a webhook), the hook answering `reply`. */
  async function submit(reply: Reply) {
    hook.before = () => reply;
    const runId = `run-${++run}`;
    const { status, json } = await harness.api<ExternalApprovalView>(
      'POST',
      '/external-approvals',
      'agent-bot',
      {
        runId,
        callId: 'call-1',
        toolName: 'refund_order',
        args: ARGS,
        webhook: { url: `${receiverUrl}/hooks/${runId}` },
      },
    );
    expect(status).toBe(201);
    return { runId, view: ExternalApprovalViewSchema.parse(json) };
  }

  const admissionAudit = async (approvalId: string) =>
    (await harness.audit(approvalId)).filter((e) => e.type.startsWith('admission.'));

  it('allow: the call is asked of people as usual, after a signed request to the hook', async () => {
    const { runId, view } = await submit({ json: { action: 'allow' } });
    expect(view.status).toBe('pending');
    expect(await harness.pendingFor('bob')).toContain(view.approvalId);
    expect(hook.forRun(runId)).toEqual([
      expect.objectContaining({
        signed: true,
        stage: 'before_tool',
        tool: 'refund_order',
        arguments: ARGS,
        fingerprint: fingerprint('refund_order', ARGS),
        principal: 'agent-bot',
        agent: 'agent-bot',
      }),
    ]);
    expect(await admissionAudit(view.approvalId)).toEqual([
      expect.objectContaining({
        type: 'admission.answered',
        actor: 'hook:gate',
        detail: expect.objectContaining({ hook: 'gate', stage: 'before_tool', outcome: 'allow' }),
      }),
    ]);
  });

  it("deny: decided deny at once in the hook's name, nobody asked, the claim refused, the webhook sent", async () => {
    const { view } = await submit({
      json: { action: 'deny', reason: 'refunds above 1,000 go through finance' },
    });
    expect(view).toMatchObject({
      status: 'deny',
      decidedBy: 'policy',
      approvers: [],
      reason: 'admission hook gate: refunds above 1,000 go through finance',
    });
    const read = await harness.api<ExternalApprovalView>(
      'GET',
      `/external-approvals/${view.approvalId}`,
      'agent-bot',
    );
    expect(read.json).toMatchObject({ status: 'deny', decidedBy: 'policy', reason: view.reason });
    // Nobody was asked: no approver's inbox lists it.
    for (const approver of ['bob', 'carol', 'dave'])
      expect(await harness.pendingFor(approver)).not.toContain(view.approvalId);
    const claimed = await harness.api<{ error: string }>(
      'POST',
      `/external-approvals/${view.approvalId}/claim`,
      'agent-bot',
      { fingerprint: view.fingerprint },
    );
    expect([claimed.status, claimed.json.error]).toEqual([403, 'denied']);
    const delivery = await waitFor(
      () => receiver.bodies.find((b) => b.includes(view.approvalId)),
      'the webhook of the denied approval',
    );
    expect(JSON.parse(delivery)).toMatchObject({ approval: { status: 'deny', decidedBy: 'policy' } });
    const entries = await harness.audit(view.approvalId);
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'admission.answered', actor: 'hook:gate' }),
        expect.objectContaining({
          type: 'decision.recorded',
          actor: 'hook:gate',
          detail: expect.objectContaining({
            decision: 'deny',
            decidedBy: 'policy',
            hook: 'gate',
            answer: 'deny',
          }),
        }),
      ]),
    );
  });

  it('confirm naming finance with quorum 2: only finance may decide, and two approvals are needed', async () => {
    const { view } = await submit({ json: { action: 'confirm', groups: ['finance'], quorum: 2 } });
    expect(view.status).toBe('pending');
    // ops (the agent-bot rule's group) is not asked: the hook named finance.
    expect(await harness.pendingFor('bob')).not.toContain(view.approvalId);
    expect(await harness.pendingFor('carol')).toContain(view.approvalId);
    const bobs = await harness.api('POST', `/approvals/${view.approvalId}/decisions`, 'bob', {
      decision: 'approve',
    });
    expect(bobs.status).toBe(404);
    await harness.approve(view.approvalId, 'carol');
    const afterOne = await harness.api<ExternalApprovalView>(
      'GET',
      `/external-approvals/${view.approvalId}`,
      'agent-bot',
    );
    expect(afterOne.json.status).toBe('pending');
    await harness.approve(view.approvalId, 'dave');
    const decided = await harness.api<ExternalApprovalView>(
      'GET',
      `/external-approvals/${view.approvalId}?waitMs=5000`,
      'agent-bot',
    );
    expect(decided.json).toMatchObject({ status: 'allow', decidedBy: 'person' });
    expect([...(decided.json.approvers ?? [])].sort()).toEqual(['carol', 'dave']);
  });

  it.each<[string, Reply, string]>([
    [
      'skip',
      { json: { action: 'skip', content: 'refunds are closed today' } },
      'admission hook gate skipped the call: refunds are closed today',
    ],
    [
      'abort',
      { json: { action: 'abort', reason: 'run looks compromised' } },
      'admission hook gate aborted the run: run looks compromised',
    ],
  ])('%s: decided deny at once, the reason carrying what the hook said', async (_what, reply, reason) => {
    const { view } = await submit(reply);
    expect(view).toMatchObject({ status: 'deny', decidedBy: 'policy', reason });
    expect(await harness.pendingFor('bob')).not.toContain(view.approvalId);
  });

  it.each<[string, Reply, RegExp]>([
    ['answers HTTP 500', { status: 500, raw: 'boom' }, /^admission hook gate answered HTTP 500$/],
    ['times out', 'hang', /^admission hook gate timed out after 500 ms$/],
    ['answers a bad body', { json: { action: 'maybe' } }, /^admission hook gate answered a bad body/],
  ])('a hook that %s decides deny (fail closed)', async (_what, reply, reason) => {
    const { view } = await submit(reply);
    expect(view).toMatchObject({ status: 'deny', decidedBy: 'policy' });
    expect(view.reason).toMatch(reason);
    expect(await harness.pendingFor('bob')).not.toContain(view.approvalId);
    expect(await admissionAudit(view.approvalId)).toEqual([
      expect.objectContaining({ type: 'admission.failed', actor: 'hook:gate' }),
    ]);
  });

  it('a hook whose secret is not set stops the start, naming the variable', () => {
    const env = approvalServiceEnv(
      uniquePrefixes('external-admission-config'),
      withHook('http://127.0.0.1:9/x'),
    );
    expect(() => loadApprovalServiceConfig(env)).toThrow(
      /APPROVALS_CONFIG: admission\.beforeTool\[0\]\.secretEnv: SUBMISSION_HOOK_SECRET/,
    );
  });
});

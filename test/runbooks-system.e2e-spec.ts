// Runbooks through the whole system (worker + approval service, Slack stand-in, real SMTP): a gate routed to a quorum
// of two, its step shown on every channel, and a gate's denial following its denied edge.
import { SYSTEM_APPROVALS_CONFIG, TestSystem } from './support/system';
import { waitFor } from './support/redis';

jest.setTimeout(60_000);

const QUORUM_GATES = {
  ...SYSTEM_APPROVALS_CONFIG,
  rules: [
    { name: 'runbook gates need two approvers', match: { tool: 'runbook_gate' }, groups: ['ops'], quorum: 2 },
  ],
};

describe('runbooks through the whole system', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start('runbook-sys', {
      approvalEnv: { APPROVALS_CONFIG: JSON.stringify(QUORUM_GATES) },
      workerEnv: { RUNBOOKS_DIR: 'test/support/runbooks' },
    });
  });
  afterAll(() => system?.close());

  async function startRunbook(name: string, input: Record<string, unknown> = {}): Promise<string> {
    const response = await fetch(`${system.workerUrl}/runbooks/${name}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...system.bearer('alice') },
      body: JSON.stringify({ input }),
    });
    const body = (await response.json()) as { runId: string };
    if (response.status !== 202) throw new Error(`answered ${response.status}: ${JSON.stringify(body)}`);
    return body.runId;
  }

  it('passes a gate only once a quorum of two approved it, and says the step on every channel', async () => {
    const runId = await startRunbook('gated');
    const gate = await system.waitForPendingCall(runId);
    expect(gate).toMatchObject({
      callId: 'rb.gate@1',
      toolName: 'runbook_gate',
      args: { runbook: 'gated', node: 'gate', message: 'Delete volume scratch? It cannot be undone.' },
    });
    const approval = await system.waitForApproval(gate.callId);
    expect(approval.request.context?.step).toBe('step 1 of 3 of gated');
    expect(approval.quorum).toBe(2);

    // Slack and email checked here; the inbox card and the email page use the same list of lines (contextLines).
    const slack = await waitFor(
      () => system.slack.find('chat.postMessage', gate.callId).at(-1),
      'Slack message',
    );
    expect(JSON.stringify(slack.body)).toContain('step 1 of 3 of gated');
    const mail = await waitFor(
      () => system.smtp.to('bob@example.test', 'step 1 of 3 of gated').at(0),
      'email',
    );
    expect(mail.text).toContain('Delete volume scratch?');

    const first = await system.api('POST', `/approvals/${gate.callId}/decisions`, 'bob', {
      decision: 'approve',
    });
    expect(first.json).toMatchObject({ status: 'vote_recorded', approvals: 1, quorum: 2 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await system.run(runId)).status).toBe('awaiting_confirmation');

    await system.api('POST', `/approvals/${gate.callId}/decisions`, 'carol', { decision: 'approve' });
    const done = await system.waitForStatus(runId, 'completed');
    const statuses = Object.fromEntries((done.runbook?.nodes ?? []).map((n) => [n.path, n.status]));
    // delete_volume is manual-only: the runbook goes on, and approvers are told a person must do it.
    expect(statuses).toEqual({ gate: 'done', delete: 'done' });
    expect(done.messages).toContainEqual(
      expect.objectContaining({
        role: 'tool',
        toolCallId: 'rb.delete@1',
        content: expect.stringContaining('must be done by a person'),
      }),
    );
  });

  it('follows the denied edge when one approver denies the gate', async () => {
    const runId = await startRunbook('gated', { volume: 'pg-data' });
    const gate = await system.waitForPendingCall(runId);
    await system.waitForApproval(gate.callId);
    await system.api('POST', `/approvals/${gate.callId}/decisions`, 'bob', {
      decision: 'deny',
      reason: 'keep it',
    });
    const done = await system.waitForStatus(runId, 'completed');
    const statuses = Object.fromEntries((done.runbook?.nodes ?? []).map((n) => [n.path, n.status]));
    expect(statuses).toEqual({ gate: 'refused', keep: 'done' });
  });
});

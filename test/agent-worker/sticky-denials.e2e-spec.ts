// Rejections that stick, through the running worker and approval service: after a person denies a call, the same
// call (same tool, same arguments) asked for again is refused at once with the original reason and approver, and no
// new approval request goes out (no Slack message, no mail); other arguments are asked about as usual. Per tool:
// `run` (the default), `off`, or the requester's runs within a window.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, RunView } from '@countersign/contracts';
import { writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';
import { TestSystem } from '../support/system';

jest.setTimeout(60_000);

function agentsConfig(): string {
  const config = JSON.parse(readFileSync(join(__dirname, '..', 'support', 'agents.json'), 'utf8'));
  // get_service_status raised to confirm, so that a tool whose denials do not stick can be denied.
  config.agents.ops.tools = config.agents.ops.tools.map((name: string) =>
    name === 'get_service_status' ? { name, tier: 'confirm' } : name,
  );
  config.agents.ops.stickyDenials = {
    scale_service: { scope: 'requester', windowSeconds: 600 },
    get_service_status: 'off',
  };
  return writeConfig(config);
}

const toolMessage = (view: RunView, callId: string) =>
  view.messages.find(
    (m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool' && m.toolCallId === callId,
  )?.content;

describe('sticky denials', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start('sticky-denials', { workerEnv: { AGENTS_CONFIG: agentsConfig() } });
  });
  afterAll(() => system.close());

  const deny = (callId: string, reason: string) =>
    system.api('POST', `/approvals/${callId}/decisions`, 'bob', { decision: 'deny', reason });

  /** The run parked on the call `callId`, as `as` reads it. */
  const waitForPending = (runId: string, callId: string, as = 'alice') =>
    waitFor(async () => {
      const view = await system.run(runId, as);
      return view.status === 'awaiting_confirmation'
        ? view.pending.find((c) => c.callId === callId)
        : undefined;
    }, `run ${runId} waiting for ${callId}`);

  /** Every trace a request for the call would leave: the approval service's view, Slack, mail. */
  async function asked(callId: string): Promise<boolean> {
    const { status } = await system.api('GET', `/approvals/${callId}`, 'bob');
    const slack = system.slack.find('chat.postMessage', callId).length;
    const mails = system.smtp.mails.filter((m) => JSON.stringify(m).includes(callId)).length;
    return status !== 404 || slack > 0 || mails > 0;
  }

  /** The worker's `countersign_tool_calls_total` for one outcome. */
  async function counted(outcome: string): Promise<number> {
    const text = await (
      await fetch(`${system.workerUrl}/metrics`, { headers: system.bearer('scraper') })
    ).text();
    const line = new RegExp(`^countersign_tool_calls_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
      text,
    );
    return Number(line?.[1] ?? 0);
  }

  it('refuses the same call again in the run without asking anyone, naming the approver; other arguments are asked', async () => {
    const [waitingBefore, deniedBefore] = [await counted('pending_confirmation'), await counted('denied')];
    const runId = await system.startRun([
      { toolCalls: [{ id: 'sticky-first', name: 'restart_service', args: { service: 'web' } }] },
      { toolCalls: [{ id: 'sticky-again', name: 'restart_service', args: { service: 'web' } }] },
      { toolCalls: [{ id: 'sticky-other', name: 'restart_service', args: { service: 'api' } }] },
      { text: 'gave up' },
    ]);
    const first = await system.waitForPendingCall(runId);
    expect(first.callId).toBe('sticky-first');
    await system.waitForApproval(first.callId);
    const restartsBefore = (await system.service('web')).restarts;
    expect((await deny(first.callId, 'web is frozen for the sale')).status).toBe(200);

    // The repeat is refused at once; the run goes on to the call with other arguments, which waits for a person.
    const other = await waitForPending(runId, 'sticky-other');
    await system.waitForApproval(other.callId);
    const view = await system.run(runId);
    expect(toolMessage(view, 'sticky-again')).toMatch(
      /not run and nobody was asked again.*already denied earlier in this run by bob\. Reason: web is frozen for the sale/,
    );
    expect(await asked('sticky-again')).toBe(false);
    expect((await system.service('web')).restarts).toBe(restartsBefore);

    // The audit names the automatic refusal and the decision it repeated.
    const refusal = await system.waitForAudit('sticky-again', 'tool.denied');
    expect(refusal).toMatchObject({
      actor: 'agent-worker',
      detail: {
        toolName: 'restart_service',
        automatic: true,
        scope: 'run',
        approvers: ['bob'],
        reason: 'web is frozen for the sale',
        repeats: { runId, callId: 'sticky-first', approvers: ['bob'] },
      },
    });
    expect((await deny(other.callId, 'not now')).status).toBe(200);
    await system.waitForStatus(runId, 'completed');
    // Each call counted once: two waited (first, other), the repeat was refused without ever waiting.
    expect((await counted('pending_confirmation')) - waitingBefore).toBe(2);
    expect((await counted('denied')) - deniedBefore).toBe(3);
  });

  it('with `off`, asks again about a call denied before', async () => {
    const runId = await system.startRun([
      { toolCalls: [{ id: 'off-first', name: 'get_service_status', args: { service: 'api' } }] },
      { toolCalls: [{ id: 'off-again', name: 'get_service_status', args: { service: 'api' } }] },
      { text: 'gave up' },
    ]);
    const first = await system.waitForPendingCall(runId);
    await system.waitForApproval(first.callId);
    await deny(first.callId, 'keep it');
    const again = await waitForPending(runId, 'off-again');
    await system.waitForApproval(again.callId);
    await deny(again.callId, 'still no');
    await system.waitForStatus(runId, 'completed');
  });

  it("with a requester window, refuses the same call in the requester's next run, and asks for another requester", async () => {
    const scale = (id: string) => [
      { toolCalls: [{ id, name: 'scale_service', args: { service: 'payments', replicas: 1 } }] },
      { text: 'done' },
    ];
    const firstRun = await system.startRun(scale('window-first'));
    const first = await system.waitForPendingCall(firstRun);
    await system.waitForApproval(first.callId);
    await deny(first.callId, 'payments needs its replicas');
    await system.waitForStatus(firstRun, 'completed');

    const secondRun = await system.startRun(scale('window-again'));
    const second = await system.waitForStatus(secondRun, 'completed');
    expect(toolMessage(second, 'window-again')).toMatch(
      new RegExp(`already denied for this requester in run ${firstRun} .*by bob\\. Reason: payments needs`),
    );
    expect(await asked('window-again')).toBe(false);

    // Another requester's same call is asked about.
    const otherRun = await system.startRun(scale('window-bob'), {}, 'bob');
    const asBob = await waitForPending(otherRun, 'window-bob', 'bob');
    await system.waitForApproval(asBob.callId, 'carol');
  });
});

// Deciding in three seconds, in headless Chromium against the whole system: a card says what the run is for and what
// the call will change; an approver edits the arguments and the tool runs with exactly those, once, after a second
// approver approved the edited call; a trust suggestion becomes a standing rule that decides the next call with no
// person, until it is revoked; a manual-step notice is marked done and the model is told; and how long a new request
// takes to be actionable, and a click to start the tool (printed, not judged).
import type { Browser, Page } from 'playwright-core';
import type { ApprovalView, ChatMessage, StandingRule } from '@countersign/contracts';
import { UX_APPROVALS } from './support/approver-ux';
import { describeInChromium, launchChromium } from './support/browser';
import { waitFor } from './support/redis';
import { TestSystem } from './support/system';

jest.setTimeout(120_000);

describeInChromium('the inbox: context, edits, standing rules, manual steps', () => {
  let system: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    system = await TestSystem.start('ux', {
      approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  /** A page signed in to the inbox as `who`, through a one-time link. */
  async function inboxAs(who: string, path = '/inbox'): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const link = await system.api<{ url: string }>('POST', '/inbox/sign-in-links', who);
    await page.goto(link.json.url);
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    await page.waitForURL(`${system.approvalUrl}/inbox`);
    await page.locator('#live', { hasText: 'live' }).waitFor();
    if (path !== '/inbox') await page.goto(`${system.approvalUrl}${path}`);
    return page;
  }

  const card = (page: Page, callId: string) => page.locator(`section[data-call-id="${callId}"]`);
  const contextOf = async (page: Page, callId: string) =>
    Object.fromEntries(
      await card(page, callId)
        .locator('dl.context dt')
        .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
    ) as Record<string, string>;

  it('shows on a card what the run is for, what the model said, the tool, its preview, the route, the votes and the time left', async () => {
    const runId = await system.startRun(
      [
        {
          text: 'payments is slow under the sale traffic; scaling it up.',
          toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 6 } }],
        },
        { text: 'scaled' },
      ],
      { input: 'keep payments fast during the sale' },
    );
    const call = await system.waitForPendingCall(runId);
    const page = await inboxAs('carol');
    await card(page, call.callId).waitFor();
    expect(await contextOf(page, call.callId)).toEqual({
      'Run for': 'alice: “keep payments fast during the sale”',
      'Model said': '“payments is slow under the sale traffic; scaling it up.”',
      Tool: 'scale_service (confirm): Sets the number of replicas of a service.',
      Preview: 'payments: 2 → 6 replicas',
      // The state the approval is for (scale_service's precondition): the call runs only if it still holds.
      Precondition: '{"replicas":2}',
      'Routed by': 'rule “payments need two approvers”: args.service "payments" matches "payments*"',
      Approvals: 'none yet (needs 2)',
      Expires: expect.stringMatching(/^in (29|30) min$/),
    });
    expect(await card(page, call.callId).locator('dd.preview').count()).toBe(1);

    // dave's approval shows as progress on carol's open card (live).
    expect(
      (await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'approve' }))
        .status,
    ).toBe(202);
    await card(page, call.callId).locator('dd', { hasText: '1 of 2: dave approved' }).waitFor();
    await page.close();
    await system.api('POST', `/approvals/${call.callId}/decisions`, 'carol', {
      decision: 'deny',
      reason: 'not now',
    });
    await system.waitForStatus(runId, 'completed');
  });

  it('runs a call with the arguments an approver edited, once, after the second approver approved the edited call', async () => {
    const before = (await system.service('payments')).replicas;
    const runId = await system.startRun([
      { toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 9 } }] },
      { text: 'scaled' },
    ]);
    const call = await system.waitForPendingCall(runId);
    await system.waitForApproval(call.callId, 'dave');
    // dave approves what the agent asked for; the edit below sets that vote aside.
    expect(
      (await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'approve' }))
        .status,
    ).toBe(202);

    const carol = await inboxAs('carol');
    const carolCard = card(carol, call.callId);
    await carolCard.getByRole('button', { name: 'Edit arguments…' }).click();
    const form = carolCard.locator('form.edit');
    await form.locator('[data-field="replicas"]').fill('4');
    await form.getByRole('button', { name: 'Approve with these arguments' }).click();
    await carolCard
      .locator('.after-click', { hasText: 'The other approvers are asked about the edited call' })
      .waitFor();
    expect(await system.run(runId)).toMatchObject({ status: 'awaiting_confirmation' });

    // dave is asked again: by email (a new link bound to the edited revision) and on his card.
    const edited = await waitFor(
      () => system.smtp.to('dave@example.test', 'Edited, approval needed')[0],
      'email about the edited call',
    );
    expect(edited.text).toContain('"replicas": 4');
    const dave = await inboxAs('dave');
    const daveCard = card(dave, call.callId);
    await daveCard.locator('.edited', { hasText: 'Edited by carol' }).waitFor();
    expect(await daveCard.locator('.edited').textContent()).toContain('(dave) do not count');
    expect(await daveCard.locator('pre.args').textContent()).toContain('"replicas": 4');
    await daveCard.getByRole('button', { name: 'Approve', exact: true }).click();
    await daveCard.locator('.after-click', { hasText: 'with the edited arguments' }).waitFor();

    const view = await system.waitForStatus(runId, 'completed');
    expect((await system.service('payments')).replicas).toBe(4);
    expect(before).not.toBe(4);
    const told = view.messages.find((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
    expect(told?.content).toContain(
      'Note: an approver edited the arguments before approving. The call ran with {"service":"payments","replicas":4}, not the {"service":"payments","replicas":9} you asked for.',
    );
    const audit = await system.audit({ callId: call.callId }, 'carol');
    expect(audit.filter((e) => e.type === 'tool.executed')).toEqual([
      expect.objectContaining({
        detail: expect.objectContaining({
          args: { service: 'payments', replicas: 4 },
          requestedArgs: { service: 'payments', replicas: 9 },
        }),
      }),
    ]);
    expect(audit.find((e) => e.type === 'decision.recorded' && e.actor === 'carol')?.detail).toMatchObject({
      editedArgs: { service: 'payments', replicas: 4 },
      requestedArgs: { service: 'payments', replicas: 9 },
    });
    await carol.close();
    await dave.close();
  });

  it('turns a trust suggestion into a standing rule that decides the next call with no person, until it is revoked', async () => {
    // Five approvals in a row of restart_service for alice (through the API, as any channel would).
    for (let i = 0; i < 5; i++) {
      const runId = await system.startRun(restart('web'));
      const call = await system.waitForPendingCall(runId);
      await system.waitForApproval(call.callId);
      await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', { decision: 'approve' });
      await system.waitForStatus(runId, 'completed');
    }
    const sixth = await system.startRun(restart('web'));
    const suggested = await system.waitForPendingCall(sixth);
    const carol = await inboxAs('carol');
    const suggestion = card(carol, suggested.callId).locator('.trust');
    await suggestion.waitFor();
    expect(await suggestion.textContent()).toContain('5 approvals in a row of restart_service for alice');
    await suggestion.getByRole('button', { name: 'Make it a standing rule (7 days)' }).click();
    await suggestion.locator('.rule-result', { hasText: 'Standing rule sr-' }).waitFor();
    const [rule] = (await system.api<StandingRule[]>('GET', '/standing-rules', 'carol')).json;
    expect(rule).toMatchObject({
      tool: 'restart_service',
      requester: 'alice',
      createdBy: 'carol',
      fromCallId: suggested.callId,
    });
    await system.api('POST', `/approvals/${suggested.callId}/decisions`, 'bob', { decision: 'approve' });
    await system.waitForStatus(sixth, 'completed');

    // The next matching call runs with no person: decided by policy, audited with the rule's ID.
    const restartsBefore = (await system.service('web')).restarts;
    const ruled = await system.startRun(restart('web'));
    const done = await system.waitForStatus(ruled, 'completed');
    expect((await system.service('web')).restarts).toBe(restartsBefore + 1);
    const ruledCall = done.messages.find(
      (m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool',
    )!;
    const view = (await system.api<ApprovalView>('GET', `/approvals/${ruledCall.toolCallId}`, 'bob')).json;
    expect(view).toMatchObject({
      status: 'decided',
      outcome: { decision: 'approve', decidedBy: 'policy', rule: rule.id },
    });
    expect(view.votes).toEqual([]);
    expect(await system.waitForAudit(ruledCall.toolCallId, 'tool.executed')).toMatchObject({
      actor: 'policy',
      detail: { standingRule: rule.id },
    });
    // Approvers see it as such in their history.
    await carol.goto(`${system.approvalUrl}/inbox/history`);
    await card(carol, ruledCall.toolCallId)
      .locator('h2', { hasText: `Approved by standing rule ${rule.id} (by carol)` })
      .waitFor();

    // Revoked in the Rules view: the call after that waits for a person again.
    await carol.goto(`${system.approvalUrl}/inbox/rules`);
    const ruleCard = carol.locator(`section[data-rule-id="${rule.id}"]`);
    await ruleCard.getByRole('button', { name: 'Revoke' }).click();
    await ruleCard.locator('.result', { hasText: 'Revoked' }).waitFor();
    expect((await system.api<StandingRule[]>('GET', '/standing-rules', 'carol')).json).toEqual([]);
    const after = await system.startRun(restart('web'));
    const waiting = await system.waitForPendingCall(after);
    expect((await system.waitForApproval(waiting.callId)).status).toBe('pending');
    await system.api('POST', `/approvals/${waiting.callId}/decisions`, 'bob', { decision: 'deny' });
    await carol.close();
  });

  it('marks a manual-step notice done, and the model is told a person did it', async () => {
    const runId = await system.startRun([
      {
        toolCalls: [
          { id: 'ux-manual', name: 'delete_volume', args: { volume: 'scratch' } },
          { name: 'restart_service', args: { service: 'api' } },
        ],
      },
      { text: 'done' },
    ]);
    const call = await system.waitForPendingCall(runId);
    const bob = await inboxAs('bob');
    const notice = card(bob, 'ux-manual');
    await notice.locator('.note').fill('took a snapshot first');
    await notice.getByRole('button', { name: 'Mark done' }).click();
    await notice.locator('.after-click', { hasText: 'Marked done. The agent is told' }).waitFor();
    await system.waitForAudit('ux-manual', 'manual_step.noted');

    await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', { decision: 'approve' });
    const view = await system.waitForStatus(runId, 'completed');
    const note = view.messages.find(
      (m) => m.role === 'user' && m.content.includes('manual step ux-manual done'),
    );
    const { requestId } = (await system.waitForApproval('ux-manual', 'bob')).request;
    expect(note?.content).toBe(
      `[Countersign: manual step ux-manual done (request ${requestId})] A person did the manual step delete_volume {"volume":"scratch"} that you could not run (marked done by bob: "took a snapshot first").`,
    );
    expect(await system.waitForAudit('ux-manual', 'manual_step.done')).toMatchObject({
      actor: 'bob',
      detail: { note: 'took a snapshot first' },
    });
    // Settled: it leaves the waiting list and shows in the history as done.
    await bob.goto(`${system.approvalUrl}/inbox/history`);
    await card(bob, 'ux-manual')
      .locator('h2', { hasText: 'Manual step done by bob: took a snapshot first' })
      .waitFor();
    await bob.close();
  });

  it('measures how long a new request takes to be actionable, and a click to start the tool (a figure)', async () => {
    const page = await inboxAs('bob');
    const before = (await system.service('api')).restarts;
    const runId = await system.startRun(restart('api'));
    const call = await system.waitForPendingCall(runId);
    const approve = card(page, call.callId).getByRole('button', { name: 'Approve', exact: true });
    await approve.waitFor();
    const actionableAt = Date.now();
    const request = await system.waitForApproval(call.callId);
    const created = Date.parse(request.request.requestedAt);

    const clickedAt = Date.now();
    await approve.click();
    const startedAt = await waitFor(
      async () => ((await system.service('api')).restarts > before ? Date.now() : undefined),
      'the tool to start',
      15_000,
      5,
    );
    process.stdout.write(
      `approver timing: request created → card actionable ${actionableAt - created} ms; click → tool started ${startedAt - clickedAt} ms\n`,
    );
    expect(actionableAt).toBeGreaterThanOrEqual(created);
    expect(startedAt).toBeGreaterThanOrEqual(clickedAt);
    await system.waitForStatus(runId, 'completed');
    await page.close();
  });
});

function restart(service: string) {
  return [{ toolCalls: [{ name: 'restart_service', args: { service } }] }, { text: `restarted ${service}` }];
}

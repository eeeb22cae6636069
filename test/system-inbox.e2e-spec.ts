// The whole system, decided in the web inbox in headless Chromium. (docs/inbox.png: npm run docs:screenshots.)
import type { Browser } from 'playwright-core';
import { describeInChromium, launchChromium } from './support/browser';
import { restartScript, TestSystem } from './support/system';

describeInChromium('the whole system, decided in the web inbox', () => {
  let system: TestSystem;
  let browser: Browser;
  beforeAll(async () => {
    system = await TestSystem.start('sys-inbox');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  it('runs a restart that an approver approved with one click in the inbox', async () => {
    const runId = await system.startRun(restartScript('api'));
    const call = await system.waitForPendingCall(runId);
    await system.waitForApproval(call.callId);

    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    const link = await system.api<{ url: string }>('POST', '/inbox/sign-in-links', 'bob');
    await page.goto(link.json.url);
    expect(await page.textContent('body')).toContain('This link signs this browser in as Bob Builder (bob).');
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    expect(await page.locator('header.who').textContent()).toContain('Inbox of Bob Builder (bob)');
    const card = page.locator(`section[data-call-id="${call.callId}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain('restart_service');
    expect(await card.textContent()).toContain('requested by alice');
    await page.locator('#live', { hasText: 'live' }).waitFor();

    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });

    await system.waitForStatus(runId, 'completed');
    expect((await system.service('api')).restarts).toBe(1);
    expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
      actor: 'bob',
      detail: { decision: 'approve', channel: 'web' },
    });
    await system.waitForAudit(call.callId, 'tool.executed');
  });

  it('answers a call with a response from the inbox (Respond…, type, send): nothing runs, the model is told', async () => {
    const before = (await system.service('web')).restarts;
    const runId = await system.startRun(restartScript('web'));
    const call = await system.waitForPendingCall(runId);
    await system.waitForApproval(call.callId);
    const text = 'Not like this: restart only the canary first.';

    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    const link = await system.api<{ url: string }>('POST', '/inbox/sign-in-links', 'carol');
    await page.goto(link.json.url);
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    const card = page.locator(`section[data-call-id="${call.callId}"]`);
    await card.waitFor();
    await page.locator('#live', { hasText: 'live' }).waitFor();

    const box = card.getByRole('textbox', { name: 'Response' });
    expect(await box.isVisible()).toBe(false);
    await card.getByRole('button', { name: 'Respond…' }).click();
    await box.fill(text);
    await card.getByRole('button', { name: 'Send response' }).click();
    await card.locator('.after-click', { hasText: 'Responded. restart_service does not run' }).waitFor();

    const run = await system.waitForStatus(runId, 'completed');
    expect(run.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId)?.content).toContain(
      `the approver (carol) responded instead of approving. This is their response, not the tool's output: ${text}`,
    );
    expect((await system.service('web')).restarts).toBe(before);
    expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
      actor: 'carol',
      detail: { decision: 'respond', response: text, channel: 'web' },
    });
    await page.close();
  });
});

// The web inbox in headless Chromium: it lists a request, updates live, and a click approves it.
import type { Browser } from 'playwright-core';
import { describeInChromium, launchChromium } from './support/browser';
import { startApprovalService, type RunningApprovalService } from '../apps/approval-service/src/bootstrap';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from './support/approval-harness';
import { deletePrefixedKeys, uniquePrefixes, waitFor } from './support/redis';

jest.setTimeout(60_000);

const prefixes = uniquePrefixes('inbox');
const APPROVALS = {
  approvers: [
    { id: 'bob', name: 'Bob Builder', apiToken: 'bob-inbox-token-0123456789' },
    { id: 'carol', name: 'Carol Ops', apiToken: 'carol-inbox-token-0123456789' },
  ],
  groups: [{ id: 'ops', members: ['bob', 'carol'] }],
  defaultGroup: 'ops',
};

describeInChromium('the web inbox in headless Chromium', () => {
  let service: RunningApprovalService;
  let queues: AgentSideQueues;
  let browser: Browser;

  beforeAll(async () => {
    service = await startApprovalService(approvalServiceEnv(prefixes, APPROVALS), {
      port: 0,
      host: '127.0.0.1',
    });
    queues = new AgentSideQueues(prefixes);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await queues?.close();
    await deletePrefixedKeys(prefixes);
  });

  it('lists a pending request, shows new ones live, and approves with one click', async () => {
    const first = await queues.submit(
      approvalRequest({
        toolName: 'scale_service',
        args: { service: 'checkout', replicas: 6, reason: 'Black Friday <traffic>' },
      }),
    );
    await waitFor(
      async () =>
        (
          await fetch(`${service.url}/approvals/${first.callId}`, {
            headers: { Authorization: 'Bearer bob-inbox-token-0123456789' },
          })
        ).ok,
      'request stored',
    );

    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await page.goto(await signInLink(service.url, 'bob-inbox-token-0123456789'));
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    await page.waitForURL(`${service.url}/inbox`); // no credential in the address bar

    const firstCard = page.locator(`section[data-call-id="${first.callId}"]`);
    await firstCard.waitFor();
    expect(await firstCard.locator('code').first().textContent()).toBe('scale_service');
    expect(await firstCard.locator('pre').textContent()).toContain('"reason": "Black Friday <traffic>"');
    expect(await firstCard.textContent()).toContain('requested by alice');
    await page.locator('#live', { hasText: 'live' }).waitFor();
    // docs/inbox.png comes from the whole-system inbox test (system-inbox.e2e-spec.ts); this one only checks rendering.
    expect((await page.screenshot({ fullPage: true })).length).toBeGreaterThan(1_000);

    // Arrives while the page is open: shown without a reload (SSE).
    const second = await queues.submit(
      approvalRequest({ toolName: 'rotate_keys', args: { keyring: 'payments' } }),
    );
    await page.locator(`section[data-call-id="${second.callId}"]`).waitFor();

    await firstCard.locator('.reason').fill('capacity is ready');
    await firstCard.getByRole('button', { name: 'Approve' }).click();
    const decision = await queues.waitForDecision(first.callId);
    expect(decision).toMatchObject({ decision: 'approve', approvers: ['bob'], reason: 'capacity is ready' });
    await firstCard.waitFor({ state: 'detached' });

    // Decided elsewhere (another approver, by API): it disappears from the open page.
    const res = await fetch(`${service.url}/approvals/${second.callId}/decisions`, {
      method: 'POST',
      headers: { Authorization: 'Bearer carol-inbox-token-0123456789', 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'deny' }),
    });
    expect(res.status).toBe(200);
    await page.locator(`section[data-call-id="${second.callId}"]`).waitFor({ state: 'detached' });
    await page.locator('#empty').waitFor();
  });

  it('shows a sign-in form, not the requests, without a session', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${service.url}/inbox`);
    expect(response?.status()).toBe(401);
    expect(await page.locator('form[action="/inbox/session"]').count()).toBe(1);
    await page.fill('input[name="token"]', 'carol-inbox-token-0123456789');
    await page.click('button[type="submit"]');
    await page.locator('h1', { hasText: 'Carol Ops' }).waitFor();
  });

  it('never signs in from a token in the address, and a sign-in link works once', async () => {
    const page = await browser.newPage();
    const refused = await page.goto(`${service.url}/inbox?token=carol-inbox-token-0123456789`);
    expect(refused?.status()).toBe(400);
    expect(await page.textContent('body')).toContain('Tokens in addresses are not accepted');
    expect((await page.context().cookies()).some((c) => c.name === 'countersign_inbox')).toBe(false);

    const link = await signInLink(service.url, 'carol-inbox-token-0123456789');
    await page.goto(link);
    await page.goto(link); // a second look (a link scanner, a reload) spends nothing: only the button does
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    await page.locator('h1', { hasText: 'Carol Ops' }).waitFor();

    const other = await browser.newPage();
    await other.goto(link);
    await other.getByRole('button', { name: 'Open my inbox' }).click();
    expect(await other.textContent('body')).toContain('used already or has expired');
    expect(await other.locator('h1', { hasText: 'Carol Ops' }).count()).toBe(0);
  });
});

/** A one-time inbox sign-in link, as `npx countersign inbox-link` asks for it. */
async function signInLink(baseUrl: string, token: string): Promise<string> {
  const res = await fetch(`${baseUrl}/inbox/sign-in-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(201);
  const { url } = (await res.json()) as { url: string };
  expect(url).toMatch(/\/inbox\/sign-in\?code=[A-Za-z0-9_-]{43}$/);
  return url;
}

// The web inbox in headless Chromium: it lists a request, updates live, and a click approves it. Who it signs in (only
// approvers and rule-writers) and that it always says whose it is, over plain HTTP and in Chromium.
import type { Browser, Locator } from 'playwright-core';
import { signToken } from '../../apps/approval-service/src/auth/signed-token';
import { describeInChromium, launchChromium } from '../support/browser';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { signInToInbox } from '../support/inbox-session';
import { approvalsConfig, approver } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(60_000);

const prefixes = uniquePrefixes('inbox');
const APPROVALS = approvalsConfig({
  approvers: [
    approver('bob', { name: 'Bob Builder' }),
    approver('carol', { name: 'Carol Ops' }),
    // In no group, but writes standing rules: the inbox's Rules view is hers.
    approver('rita', { name: 'Rita Rules', roles: ['rule-writer'] }),
  ],
});

let service: RunningApprovalService;
let queues: AgentSideQueues;

beforeAll(async () => {
  service = await startApprovalService(approvalServiceEnv(prefixes, APPROVALS), {
    port: 0,
    host: '127.0.0.1',
  });
  queues = new AgentSideQueues(prefixes);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await deletePrefixedKeys(prefixes);
});

describe('finding 8c: the inbox signs in only approvers and rule-writers, and says whose it is', () => {
  const NOT_AN_APPROVER =
    'Mallory (mallory) is not an approver: the inbox is for members of an approver group and for rule-writers';

  it('refuses mallory (in no group) on the sign-in form with a clear message and no session', async () => {
    const signIn = await signInToInbox(service.url, { token: testToken('mallory') });
    expect(signIn.status).toBe(403);
    expect(signIn.session).toBeUndefined();
    expect(signIn.page).toContain(NOT_AN_APPROVER);
    expect(signIn.page).toContain('form method="post" action="/inbox/session"');
  });

  it('mints no sign-in link for mallory: 403 naming why', async () => {
    const res = await fetch(`${service.url}/inbox/sign-in-links`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${testToken('mallory')}` },
    });
    const body = (await res.json()) as { message?: string; url?: string };
    expect({ status: res.status, url: body.url }).toEqual({ status: 403, url: undefined });
    expect(body.message).toContain(NOT_AN_APPROVER);
  });

  it('shows mallory no inbox view with her bearer token either', async () => {
    const asMallory = { headers: { Authorization: `Bearer ${testToken('mallory')}` } };
    const page = await fetch(`${service.url}/inbox`, asMallory);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain(NOT_AN_APPROVER);
    for (const path of ['/inbox/items', '/inbox/history/items', '/inbox/rules/items', '/inbox/events']) {
      const res = await fetch(`${service.url}${path}`, asMallory);
      const message = ((await res.json()) as { message?: string }).message;
      expect({ path, status: res.status, message }).toEqual({
        path,
        status: 403,
        message: expect.stringContaining(NOT_AN_APPROVER),
      });
    }
  });

  it('refuses a session cookie of a principal who is no approver (one signed before this rule, or since removed)', async () => {
    const cookie = `countersign_inbox=${signToken({ a: 'mallory', exp: Date.now() + 60_000 }, 'link-secret-0123456789', 'inbox-session')}`;
    const page = await fetch(`${service.url}/inbox`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain(NOT_AN_APPROVER);
    const items = await fetch(`${service.url}/inbox/items`, { headers: { Cookie: cookie } });
    expect(items.status).toBe(401);
  });

  it('signs in a rule-writer in no group, whose view is Rules', async () => {
    const signIn = await signInToInbox(service.url, { token: testToken('rita') });
    expect(signIn.status).toBe(303);
    const rules = await fetch(`${service.url}/inbox/rules`, { headers: { Cookie: signIn.session! } });
    expect(rules.status).toBe(200);
    expect(await rules.text()).toContain('Inbox of Rita Rules (rita)');
  });

  it('says whose a sign-in link is before its button signs in, and that a spent one is spent', async () => {
    const link = await signInLink(service.url, testToken('carol'));
    const landing = await fetch(link);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('This link signs this browser in as Carol Ops (carol).');
    const code = new URL(link).searchParams.get('code')!;
    expect((await signInToInbox(service.url, { code })).status).toBe(303);
    const spent = await fetch(link);
    expect(spent.status).toBe(410);
    const text = await spent.text();
    expect(text).toContain('That sign-in link was used already or has expired');
    expect(text).not.toContain('name="code"');
  });

  it('names whose inbox it is on every view, and signs out', async () => {
    const { session } = await signInToInbox(service.url, { token: testToken('carol') });
    for (const path of ['/inbox', '/inbox/history', '/inbox/rules']) {
      const html = await (await fetch(`${service.url}${path}`, { headers: { Cookie: session! } })).text();
      expect({ path, named: html.includes('Inbox of Carol Ops (carol)') }).toEqual({ path, named: true });
      expect(html).toContain('id="sign-out"');
    }
    const out = await fetch(`${service.url}/inbox/sign-out`, {
      method: 'POST',
      headers: { Cookie: session!, 'X-Countersign-Inbox': '1' },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^countersign_inbox=;.*Max-Age=0/i);
  });
});

describeInChromium('the web inbox in headless Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
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
            headers: { Authorization: `Bearer ${testToken('bob')}` },
          })
        ).ok,
      'request stored',
    );

    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await page.goto(await signInLink(service.url, testToken('bob')));
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
      headers: { Authorization: `Bearer ${testToken('carol')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'deny' }),
    });
    expect(res.status).toBe(200);
    await page.locator(`section[data-call-id="${second.callId}"]`).waitFor({ state: 'detached' });
    await page.locator('#empty').waitFor();
  });

  it('keeps a 300-character argument inside its card, pending and in History, and labels the History time as the decision time', async () => {
    const long = `${'a'.repeat(150)}/${'b'.repeat(149)}`; // 300 characters, no space to break at
    const request = await queues.submit(
      approvalRequest({ toolName: 'scale_service', args: { service: 'checkout', note: long } }),
    );
    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    await page.goto(await signInLink(service.url, testToken('bob')));
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    await page.waitForURL(`${service.url}/inbox`);
    const pending = page.locator(`section[data-call-id="${request.callId}"]`);
    await pending.waitFor();
    expect(await overflowOf(pending)).toEqual([]);

    const res = await fetch(`${service.url}/approvals/${request.callId}/decisions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${testToken('carol')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'deny', reason: `not with ${long}` }),
    });
    expect(res.status).toBe(200);
    await page.goto(`${service.url}/inbox/history`);
    const settled = page.locator(`section[data-call-id="${request.callId}"]`);
    await settled.waitFor();
    expect(await settled.locator('pre').textContent()).toContain(long);
    expect(await overflowOf(settled)).toEqual([]);
    // Long arguments wrap inside the card, so the whole value reads without scrolling sideways.
    expect(await settled.locator('pre').evaluate((pre) => pre.scrollWidth <= pre.clientWidth)).toBe(true);
    // The time is when it was decided, not when it was asked.
    expect(await settled.locator('.meta').textContent()).toMatch(/ · decided \d\d:\d\d UTC \(\d+s ago\)$/);
    expect(await settled.locator('.meta time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.close();
  });

  it('shows a sign-in form, not the requests, without a session', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${service.url}/inbox`);
    expect(response?.status()).toBe(401);
    expect(await page.locator('form[action="/inbox/session"]').count()).toBe(1);
    await page.fill('input[name="token"]', testToken('carol'));
    await page.click('button[type="submit"]');
    await page.locator('h1', { hasText: 'Carol Ops' }).waitFor();
    expect(await page.locator('header.who').textContent()).toContain('Inbox of Carol Ops (carol)');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('form[action="/inbox/session"]').waitFor();
    expect((await page.context().cookies()).some((c) => c.name === 'countersign_inbox')).toBe(false);
    expect((await page.goto(`${service.url}/inbox`))?.status()).toBe(401);
  });

  it('never signs in from a token in the address, and a sign-in link works once', async () => {
    const page = await browser.newPage();
    const refused = await page.goto(`${service.url}/inbox?token=${testToken('carol')}`);
    expect(refused?.status()).toBe(400);
    expect(await page.textContent('body')).toContain('Tokens in addresses are not accepted');
    expect((await page.context().cookies()).some((c) => c.name === 'countersign_inbox')).toBe(false);

    const link = await signInLink(service.url, testToken('carol'));
    const other = await browser.newPage();
    await other.goto(link); // opened in someone else's browser: it says whose inbox the button would open
    expect(await other.textContent('body')).toContain(
      'This link signs this browser in as Carol Ops (carol).',
    );
    await page.goto(link);
    await page.goto(link); // a second look (a link scanner, a reload) spends nothing: only the button does
    await page.getByRole('button', { name: 'Open my inbox' }).click();
    await page.locator('h1', { hasText: 'Carol Ops' }).waitFor();
    expect(await page.locator('header.who').textContent()).toContain('Inbox of Carol Ops (carol)');

    // The page opened before the link was spent still has the button; it no longer signs anyone in.
    await other.getByRole('button', { name: 'Open my inbox' }).click();
    expect(await other.textContent('body')).toContain('used already or has expired');
    expect(await other.locator('h1', { hasText: 'Carol Ops' }).count()).toBe(0);
    await other.goto(link);
    expect(await other.textContent('body')).toContain('used already or has expired');
    expect(await other.getByRole('button', { name: 'Open my inbox' }).count()).toBe(0);
  });
});

/**
 * The elements of a card that reach outside it: a box (or a line of an inline element) past the card's edges, or text
 * spilling out of a block that does not scroll. Empty when everything stays in the card (a scrolling box's content
 * scrolls inside it).
 */
function overflowOf(card: Locator): Promise<string[]> {
  return card.evaluate((root) => {
    const outer = root.getBoundingClientRect();
    const style = (el: typeof root) => root.ownerDocument.defaultView!.getComputedStyle(el);
    const outside = (el: typeof root) =>
      [...el.getClientRects()].some((box) => box.right > outer.right + 0.5 || box.left < outer.left - 0.5);
    const spills = (el: typeof root) =>
      style(el).display !== 'inline' &&
      style(el).overflowX === 'visible' &&
      el.scrollWidth > el.clientWidth + 1;
    return [root, ...root.querySelectorAll('*')]
      .filter((el) => (el !== root && outside(el)) || spills(el))
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${el.textContent?.slice(0, 40)}`);
  });
}

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

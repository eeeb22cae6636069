// The whole system, decided by email: the mail is captured by a real SMTP server; its link's GET only
// shows a confirmation page, its POST decides, and the run completes.
import { TestSystem } from './support/system';

let system: TestSystem;
beforeAll(async () => (system = await TestSystem.start('sys-email')));
afterAll(() => system?.close());

it('runs a scale that an approver approved through the emailed link (GET confirms, POST decides)', async () => {
  const runId = await system.startRun([
    { toolCalls: [{ name: 'scale_service', args: { service: 'api', replicas: 5 } }] },
    { text: 'scaled api' },
  ]);
  const call = await system.waitForPendingCall(runId);
  const { mail, link } = await system.mailTo('bob', call.callId);
  expect(mail.text).toContain('scale_service');

  const page = await fetch(link);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('method="post"');
  expect((await system.run(runId)).status).toBe('awaiting_confirmation'); // a GET decides nothing
  expect((await system.service('api')).replicas).toBe(3);

  const post = await fetch(link, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'decision=approve&reason=traffic+spike',
  });
  expect(post.status).toBe(200);

  await system.waitForStatus(runId, 'completed');
  expect((await system.service('api')).replicas).toBe(5);
  expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
    actor: 'bob',
    detail: { decision: 'approve', channel: 'email', reason: 'traffic spike' },
  });
  await system.waitForAudit(call.callId, 'tool.executed');
});

it('answers a call with a response through the emailed link: the page has a respond form, nothing runs', async () => {
  const before = await system.service('api');
  const runId = await system.startRun([
    { toolCalls: [{ name: 'scale_service', args: { service: 'api', replicas: 9 } }] },
    { text: 'asked about api' },
  ]);
  const call = await system.waitForPendingCall(runId);
  const { link } = await system.mailTo('bob', call.callId);
  const text = 'Not 9: scale api to 4 first and watch the error rate.';

  const page = await (await fetch(link)).text();
  expect(page).toContain('<textarea name="response"');
  expect(page).toContain('name="decision" value="respond"');

  // The respond form without text is refused naming the field, and decides nothing (the link stays unused).
  const empty = await fetch(link, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'decision=respond&response=',
  });
  expect(empty.status).toBe(400);
  expect(await empty.text()).toContain('response');

  const post = await fetch(link, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ decision: 'respond', response: text }).toString(),
  });
  expect(post.status).toBe(200);
  expect(await post.text()).toContain('Responded. scale_service does not run');

  const run = await system.waitForStatus(runId, 'completed');
  expect(run.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId)?.content).toContain(
    `the approver (bob) responded instead of approving. This is their response, not the tool's output: ${text}`,
  );
  expect((await system.service('api')).replicas).toBe(before.replicas);
  expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
    actor: 'bob',
    detail: { decision: 'respond', response: text, channel: 'email' },
  });
});

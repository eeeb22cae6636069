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

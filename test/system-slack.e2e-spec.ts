// The whole system, decided in Slack: POST /runs → parked → Slack message → signed interaction → the run completes.
import { restartScript, TestSystem } from './support/system';

let system: TestSystem;
beforeAll(async () => (system = await TestSystem.start('sys-slack')));
afterAll(() => system?.close());

it('runs a restart that an approver approved with a signed Slack interaction', async () => {
  const before = await system.service('web');
  const runId = await system.startRun(restartScript('web'));
  const call = await system.waitForPendingCall(runId);
  expect(call).toMatchObject({ toolName: 'restart_service', args: { service: 'web' }, tier: 'confirm' });
  expect((await system.service('web')).restarts).toBe(before.restarts); // parked: nothing ran yet

  const click = await system.slackClick(call.callId, 'carol', 'approve');
  expect(click.status).toBe(200);

  const run = await system.waitForStatus(runId, 'completed');
  expect(run.result).toBe('restarted web');
  expect((await system.service('web')).restarts).toBe(before.restarts + 1);

  const recorded = await system.waitForAudit(call.callId, 'decision.recorded');
  expect(recorded).toMatchObject({ actor: 'carol', detail: { decision: 'approve', channel: 'slack' } });
  expect(await system.waitForAudit(call.callId, 'tool.executed')).toMatchObject({
    detail: { toolName: 'restart_service', approvers: ['carol'] },
  });
  // The message in Slack was updated to show who decided.
  expect(
    system.slack.find('chat.update', 'carol').length + system.slack.find('chat.update', 'Carol').length,
  ).toBeGreaterThan(0);
});

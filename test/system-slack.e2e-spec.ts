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

it('answers a call with a response through the Slack Respond button and its modal: nothing runs, the model is told', async () => {
  const before = await system.service('web');
  const runId = await system.startRun(restartScript('web'));
  const call = await system.waitForPendingCall(runId);
  const text = 'Not like this: restart only the canary first.';

  // The click only opens the modal (views.open, with the click's trigger_id); nothing is decided yet.
  const click = await system.slackClick(call.callId, 'carol', 'respond');
  expect(click).toEqual({ status: 200, json: { ok: true, status: 'modal_opened' } });
  const opened = system.slack.calls.filter((c) => c.method === 'views.open').at(-1)!;
  expect(opened.authorization).toMatch(/^Bearer /);
  expect(opened.body.trigger_id).toEqual(expect.any(String));
  expect(opened.body.view).toMatchObject({
    type: 'modal',
    callback_id: 'countersign_respond',
    blocks: expect.arrayContaining([
      expect.objectContaining({
        type: 'input',
        block_id: 'response',
        element: expect.objectContaining({ type: 'plain_text_input', action_id: 'text', max_length: 4000 }),
      }),
    ]),
  });
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');

  // An empty response keeps the modal open with the error under the input; a stranger's submission is not counted.
  expect(await system.slackSubmitRespond('carol', '   ')).toEqual({
    status: 200,
    json: { response_action: 'errors', errors: { response: expect.stringContaining('must not be empty') } },
  });
  expect(await system.slackSubmitRespond({ slackUserId: 'U_NOBODY' }, text)).toMatchObject({
    json: { response_action: 'errors' },
  });
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');

  expect(await system.slackSubmitRespond('carol', text)).toEqual({
    status: 200,
    json: { response_action: 'clear' },
  });
  const run = await system.waitForStatus(runId, 'completed');
  expect(run.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId)?.content).toContain(
    `the approver (carol) responded instead of approving. This is their response, not the tool's output: ${text}`,
  );
  expect((await system.service('web')).restarts).toBe(before.restarts);
  expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
    actor: 'carol',
    detail: { decision: 'respond', response: text, channel: 'slack' },
  });
  await system.waitForAudit(call.callId, 'tool.responded');
  // The message in Slack was updated to show the response.
  expect(system.slack.find('chat.update', text).length).toBeGreaterThan(0);
});

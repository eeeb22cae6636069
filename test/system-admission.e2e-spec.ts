// An admission hook's `confirm` through the whole system (issue 28): the worker asks people about an auto-tier call
// because its hook said so, naming finance with a quorum of 2; the approval service routes the request there (not to
// the default group ops), says why, and the call runs once two of finance approved.
import type { ApprovalView } from '@countersign/contracts';
import { UX_APPROVALS } from './support/approver-ux';
import { HOOK_SECRET, HookServer } from './support/hook-server';
import { writeConfig } from './support/mcp-config';
import { TestSystem } from './support/system';

jest.setTimeout(60_000);

const hook = new HookServer();
let system: TestSystem;

beforeAll(async () => {
  await hook.start();
  hook.before = (call) =>
    call.tool === 'get_service_status'
      ? { json: { action: 'confirm', groups: ['finance'], quorum: 2 } }
      : { json: { action: 'allow' } };
  const agents = {
    agents: {
      ops: {
        tools: ['get_service_status', 'restart_service'],
        roles: { operator: { allow: ['tool:*'] } },
        users: { alice: ['operator'] },
        admission: {
          beforeTool: [
            {
              name: 'gate',
              tools: ['*'],
              url: `http://127.0.0.1:${hook.port}/before`,
              secretEnv: 'HOOK_SECRET',
            },
          ],
        },
      },
    },
  };
  system = await TestSystem.start('admission', {
    workerEnv: { AGENTS_CONFIG: writeConfig(agents), HOOK_SECRET },
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
  });
});
afterAll(async () => {
  await system?.close();
  await hook.stop();
});

it("routes a hook's confirm to the groups it named, with its quorum; two of finance approve and the call runs", async () => {
  const runId = await system.startRun([
    { toolCalls: [{ name: 'get_service_status', args: { service: 'web' } }] },
    { text: 'done' },
  ]);
  const call = await system.waitForPendingCall(runId);
  const view = await system.waitForApproval(call.callId, 'dave');
  expect(view).toMatchObject({
    status: 'pending',
    groups: ['finance'],
    quorum: 2,
    route: { rule: 'defaultGroup + admission hook gate' },
  });
  expect(view.route!.why).toMatch(/admission hook gate asked for people \(groups finance, quorum 2\)/);
  // ops (the default group) may not decide it: to bob it does not exist.
  const byBob = await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', {
    decision: 'approve',
  });
  expect(byBob.status).toBe(404);

  await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'approve' });
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');
  const last = await system.api<ApprovalView>('POST', `/approvals/${call.callId}/decisions`, 'carol', {
    decision: 'approve',
  });
  expect(last.status).toBe(200);
  const done = await system.waitForStatus(runId, 'completed');
  const result = done.messages.find((m) => m.role === 'tool');
  expect(result?.role === 'tool' && JSON.parse(result.content)).toMatchObject({ name: 'web' });
});

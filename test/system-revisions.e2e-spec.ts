// Issue 24, finding 1, through the whole system: bob (ops only) edits alice's scale_service of web into one of
// payments and approves. Payments need two approvers of finance, so the edit is routed anew: bob's approval does not
// count, finance is asked, nothing runs until two of them approve, and then exactly the edited call runs, once. The
// same edit through the REST API, the CLI's `approve --args` and the inbox's edit form.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalView, AuditEntry } from '@countersign/contracts';
import { UX_APPROVALS } from './support/approver-ux';
import { signInToInbox } from './support/inbox-session';
import { waitFor } from './support/redis';
import { TestSystem } from './support/system';

jest.setTimeout(60_000);

const bin = join(__dirname, '..', 'bin', 'countersign.js');
const token = (id: string) => UX_APPROVALS.approvers.find((a) => a.id === id)!.apiToken;

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start('revisions', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
  });
});
afterAll(() => system?.close());

/** alice's run that parks on scaling web to 3 replicas (routed to ops, one approver). */
async function scaleWeb() {
  const runId = await system.startRun([
    { toolCalls: [{ name: 'scale_service', args: { service: 'web', replicas: 3 } }] },
    { text: 'scaled' },
  ]);
  const call = await system.waitForPendingCall(runId);
  const view = await system.waitForApproval(call.callId, 'bob');
  expect(view).toMatchObject({ groups: ['ops'], quorum: 1 });
  return { runId, call, requestId: view.request.requestId };
}

/** The compiled CLI as `as`; resolves when it exits. */
function countersign(args: string[], as: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: {
      ...process.env,
      COUNTERSIGN_WORKER_URL: system.workerUrl,
      COUNTERSIGN_APPROVAL_URL: system.approvalUrl,
      COUNTERSIGN_TOKEN: token(as),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

/** Nothing ran and nothing will without finance: the run waits, payments keeps its replicas, finance sees the revision. */
async function waitsForFinance(runId: string, callId: string, paymentsBefore: number, edited: object) {
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');
  expect((await system.service('payments')).replicas).toBe(paymentsBefore);
  const view = (await system.api<ApprovalView>('GET', `/approvals/${callId}`, 'dave')).json;
  expect(view).toMatchObject({
    status: 'pending',
    groups: ['finance'],
    quorum: 2,
    route: { rule: 'payments need two approvers' },
    edited: { args: edited, by: 'bob' },
    votes: [],
  });
}

it("routes bob's web→payments edit to finance; two finance approvals run exactly the edited call, once", async () => {
  const { runId, call, requestId } = await scaleWeb();
  const paymentsBefore = (await system.service('payments')).replicas;
  const edited = { service: 'payments', replicas: 20 };

  const answer = await system.api<Record<string, unknown>>(
    'POST',
    `/approvals/${call.callId}/decisions`,
    'bob',
    {
      decision: 'approve',
      args: edited,
    },
  );
  expect(answer).toMatchObject({
    status: 202,
    json: { status: 'rerouted', route: { groups: ['finance'], quorum: 2 } },
  });
  await waitsForFinance(runId, call.callId, paymentsBefore, edited);
  // finance is notified of it: its Slack channel and its members' mail.
  await waitFor(
    () =>
      system.slack.find('chat.postMessage', requestId).find((c) => c.body.channel === '#finance-approvals'),
    'a message in #finance-approvals',
  );
  await waitFor(() => system.smtp.to('dave@example.test', '"replicas": 20')[0], 'an email to dave');

  expect(
    (await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'approve' })).status,
  ).toBe(202);
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');
  expect(
    (await system.api('POST', `/approvals/${call.callId}/decisions`, 'carol', { decision: 'approve' })).json,
  ).toMatchObject({ status: 'decided', approvers: ['dave', 'carol'] });

  await system.waitForStatus(runId, 'completed');
  expect((await system.service('payments')).replicas).toBe(20);
  const executed = (await system.audit({ callId: call.callId }, 'auditor')).filter(
    (e: AuditEntry) => e.type === 'tool.executed',
  );
  expect(executed).toEqual([expect.objectContaining({ detail: expect.objectContaining({ args: edited }) })]);
});

it('routes the same edit anew through the CLI’s `approve --args`', async () => {
  const { runId, call } = await scaleWeb();
  const paymentsBefore = (await system.service('payments')).replicas;
  const edited = { service: 'payments', replicas: 7 };
  const cli = await countersign(['approve', call.callId, '--args', JSON.stringify(edited)], 'bob');
  expect(cli).toMatchObject({ code: 0, stdout: expect.stringContaining('not approved: your edit') });
  expect(cli.stdout).toContain('finance');
  await waitsForFinance(runId, call.callId, paymentsBefore, edited);
  await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'deny' });
  await system.waitForStatus(runId, 'completed');
  expect((await system.service('payments')).replicas).toBe(paymentsBefore);
});

it('routes the same edit anew through the inbox’s edit form, and moves the card to finance', async () => {
  const { runId, call, requestId } = await scaleWeb();
  const paymentsBefore = (await system.service('payments')).replicas;
  const inbox = async (who: string) => {
    const { session } = await signInToInbox(system.approvalUrl, { token: token(who) });
    return session!;
  };
  const bob = await inbox('bob');
  const items = async (session: string) =>
    (await fetch(`${system.approvalUrl}/inbox/items`, { headers: { Cookie: session } })).text();
  expect(await items(bob)).toContain(`data-request-id="${requestId}"`);

  // What the edit form posts (inbox-script.ts): the session, the inbox header, and the fingerprint the card showed.
  const edited = { service: 'payments', replicas: 6 };
  const posted = await fetch(`${system.approvalUrl}/approvals/${requestId}/decisions`, {
    method: 'POST',
    headers: { Cookie: bob, 'Content-Type': 'application/json', 'X-Countersign-Inbox': '1' },
    body: JSON.stringify({ decision: 'approve', args: edited, fingerprint: call.fingerprint }),
  });
  expect(posted.status).toBe(202);
  expect(await posted.json()).toMatchObject({ status: 'rerouted', next: expect.stringContaining('finance') });
  await waitsForFinance(runId, call.callId, paymentsBefore, edited);
  expect(await items(bob)).not.toContain(`data-request-id="${requestId}"`);
  expect(await items(await inbox('dave'))).toContain(`data-request-id="${requestId}"`);
  await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'deny' });
  await system.waitForStatus(runId, 'completed');
});

// "Who may decide" is one rule (apps/approval-service/src/votes/deciders.ts: mayDecide, behind VotesService.vote):
// driven here through every door a person decides by — the REST API, the CLI, a Slack button, the web inbox's session
// and an email link. At each door, for a call bob asked for (bob is in ops, the group it is routed to), the requester
// himself and erin (finance: not routed) are refused and nothing is decided; then carol (ops) decides through the
// same door and the run finishes.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalView, AuditEntry } from '@countersign/contracts';
import { signLinkToken } from '../apps/approval-service/src/notifications/email/link-token';
import { approvalsConfig, approvers, group } from './support/fixtures';
import { signInToInbox } from './support/inbox-session';
import { readSse, type SseEvent } from './support/sse';
import { testToken } from './support/principals';
import { restartScript, SYSTEM_SECRETS, TestSystem } from './support/system';

jest.setTimeout(90_000);

const CONFIG = approvalsConfig({
  approvers: approvers('bob', 'carol', 'erin'),
  groups: [group('ops', ['bob', 'carol'], '#ops-approvals'), group('finance', ['erin'], '#finance')],
  rules: [
    { name: 'payments need two', match: { args: { service: 'payments*' } }, groups: ['ops'], quorum: 2 },
  ],
  defaultGroup: 'ops',
  defaults: { channels: ['slack', 'email', 'web'], expiresIn: '30m' },
});

/** What a door answered, in the same words for every door. */
interface Outcome {
  /** The door counted the vote. */
  counted: boolean;
  /** How the door said it: an HTTP status, the CLI's exit code, Slack's ephemeral error. */
  said: string;
}

/** A door: casts `who`'s approval of the request and says what came of it. */
type Door = (approval: ApprovalView, who: string) => Promise<Outcome>;

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start('who-decides', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(CONFIG) },
  });
});
afterAll(() => system?.close());

const http = async (response: Response): Promise<Outcome> => {
  await response.text();
  return { counted: response.status === 200, said: `HTTP ${response.status}` };
};

const rest: Door = async (approval, who) =>
  http(
    await fetch(`${system.approvalUrl}/approvals/${approval.request.requestId}/decisions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...system.bearer(who) },
      body: JSON.stringify({ decision: 'approve' }),
    }),
  );

const cli: Door = async (approval, who) => {
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', 'bin', 'countersign.js'), 'approve', approval.request.requestId],
    {
      cwd: tmpdir(),
      env: {
        ...process.env,
        COUNTERSIGN_APPROVAL_URL: system.approvalUrl,
        COUNTERSIGN_APPROVER_TOKEN: testToken(who),
      },
    },
  );
  child.stdout.resume();
  child.stderr.resume();
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { counted: code === 0, said: `exit ${code}` };
};

const slack: Door = async (approval, who) => {
  const { json } = await system.slackClick(
    approval.request.callId,
    { slackUserId: `U_${who.toUpperCase()}` },
    'approve',
  );
  return {
    counted: json.ok !== false,
    said: json.ok === false ? `Slack: ${String(json.error)}` : 'Slack: ok',
  };
};

const inbox: Door = async (approval, who) => {
  const { session } = await signInToInbox(system.approvalUrl, { token: testToken(who) });
  if (!session) throw new Error(`${who} could not sign in to the inbox`);
  return http(
    await fetch(`${system.approvalUrl}/approvals/${approval.request.requestId}/decisions`, {
      method: 'POST',
      // As the inbox's own script sends it: the session cookie and its header, no bearer token.
      headers: { 'Content-Type': 'application/json', 'X-Countersign-Inbox': '1', Cookie: session },
      body: JSON.stringify({ decision: 'approve' }),
    }),
  );
};

/**
 * An email link for `who`, made as the service makes the ones it mails (a link stays in a mailbox after its owner
 * left a group, or was forwarded): the link vouches for who clicks, never for what they may decide.
 */
const email: Door = async (approval, who) => {
  const token = signLinkToken(
    {
      requestId: approval.request.requestId,
      callId: approval.request.callId,
      attempt: approval.request.attempt,
      approver: who,
      expiresAt: Date.parse(approval.expiresAt),
    },
    SYSTEM_SECRETS.LINK_TOKEN_SECRET,
  );
  return http(
    await fetch(`${system.approvalUrl}/approve/${encodeURIComponent(token)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision: 'approve' }).toString(),
    }),
  );
};

/** A restart bob asks for, parked and routed to ops. */
async function bobsCall(): Promise<{ runId: string; approval: ApprovalView }> {
  const runId = await system.startRun(restartScript('web'), {}, 'bob');
  const call = await system.waitForPendingCall(runId, 'bob');
  return { runId, approval: await system.waitForApproval(call.callId, 'carol') };
}

const rejections = async (callId: string): Promise<string[]> =>
  (await system.audit({ callId }, 'carol'))
    .filter((e: AuditEntry) => e.type === 'decision.rejected')
    .map((e) => String(e.detail.reason));

describe.each([
  ['the REST API', rest, { requester: 'HTTP 403', outsider: 'HTTP 404' }],
  ['the CLI', cli, { requester: 'exit 5', outsider: 'exit 4' }],
  [
    'a Slack button',
    slack,
    {
      requester: 'Slack: you cannot decide on your own request',
      outsider: 'Slack: you are not an approver for this request',
    },
  ],
  ['the web inbox', inbox, { requester: 'HTTP 403', outsider: 'HTTP 404' }],
  // A link was mailed to its holder, so the request is no secret to them: the page says why it did not count.
  ['an email link', email, { requester: 'HTTP 403', outsider: 'HTTP 403' }],
] as const)('through %s', (_door, door, refusals) => {
  it('refuses the requester and an approver the call is not routed to, then counts an ops approver once', async () => {
    const { runId, approval } = await bobsCall();

    expect(await door(approval, 'bob')).toEqual({ counted: false, said: refusals.requester });
    expect(await door(approval, 'erin')).toEqual({ counted: false, said: refusals.outsider });
    expect((await system.waitForApproval(approval.request.callId, 'carol')).status).toBe('pending');
    expect(await rejections(approval.request.callId)).toContain('self_approval');

    expect(await door(approval, 'carol')).toMatchObject({ counted: true });
    const decided = await system.waitForApproval(approval.request.callId, 'carol');
    expect(decided.outcome).toMatchObject({ decision: 'approve', approvers: ['carol'] });
    expect((await system.waitForStatus(runId, 'completed', 15_000, 'bob')).status).toBe('completed');
  });
});

// Respond (issue 29): an answer in text instead of a verdict, under the same rule of who may decide. The call never
// runs; the model gets the text as the call's result, and the run goes on with one follow-up turn.
describe('a respond', () => {
  const TEXT = 'Not like this: restart only the canary first.';
  const respond = (id: string, who: string, body: object = { decision: 'respond', response: TEXT }) =>
    fetch(`${system.approvalUrl}/approvals/${id}/decisions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...system.bearer(who) },
      body: JSON.stringify(body),
    });

  it("reaches the model as the call's result, names who responded, and nothing runs", async () => {
    const before = (await system.service('web')).restarts;
    const { runId, approval } = await bobsCall();
    const { requestId, callId } = approval.request;

    // Who may decide is the same rule: the requester and someone the call is not routed to are refused.
    expect((await respond(requestId, 'bob')).status).toBe(403);
    expect((await respond(requestId, 'erin')).status).toBe(404);
    // A respond needs its text, and the answer names the field.
    const empty = await respond(requestId, 'carol', { decision: 'respond', response: '  ' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('response');
    expect((await system.waitForApproval(callId, 'carol')).status).toBe('pending');

    const answer = await respond(requestId, 'carol');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      status: 'decided',
      decision: 'respond',
      approvers: ['carol'],
    });

    const run = await system.waitForStatus(runId, 'completed', 15_000, 'bob');
    const told = run.messages.find((m) => m.role === 'tool' && m.toolCallId === callId);
    expect(told?.content).toBe(
      'Tool "restart_service" was not run: the approver (carol) responded instead of approving. ' +
        `This is their response, not the tool's output: ${TEXT}`,
    );
    // One follow-up turn, as after a denial: the script's final text.
    expect(run.result).toBe('restarted web');
    expect((await system.service('web')).restarts).toBe(before); // counted at the tool: never ran

    const events: SseEvent[] = [];
    await readSse(`${system.workerUrl}/runs/${runId}/events`, events, system.bearer('bob'));
    expect(events.find((e) => e.event === 'decision')?.data).toMatchObject({
      callId,
      decision: 'respond',
      approvers: ['carol'],
      response: TEXT,
    });
    expect(events.find((e) => e.event === 'tool_result')?.data).toMatchObject({
      callId,
      outcome: 'responded',
      content: told?.content,
    });

    const audit = await system.audit({ callId }, 'carol');
    expect(audit.find((e) => e.type === 'decision.recorded')).toMatchObject({
      actor: 'carol',
      detail: { decision: 'respond', response: TEXT, channel: 'api' },
    });
    expect(audit.find((e) => e.type === 'tool.responded')).toMatchObject({
      detail: { toolName: 'restart_service', approvers: ['carol'], response: TEXT },
    });
    expect(audit.some((e) => e.type === 'tool.executed' || e.type === 'tool.started')).toBe(false);
  });

  it('settles a quorum of two at once, like a deny; an approver the call is not routed to is refused', async () => {
    const before = (await system.service('payments')).restarts;
    const runId = await system.startRun(restartScript('payments'));
    const call = await system.waitForPendingCall(runId);
    const approval = await system.waitForApproval(call.callId, 'carol');
    expect(approval.quorum).toBe(2);
    const { requestId } = approval.request;

    const first = await fetch(`${system.approvalUrl}/approvals/${requestId}/decisions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...system.bearer('bob') },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(await first.json()).toMatchObject({ status: 'vote_recorded', approvals: 1, quorum: 2 });
    expect((await respond(requestId, 'erin')).status).toBe(404);
    expect(await rejections(call.callId)).toContain('unauthorized_approver');

    const second = await respond(requestId, 'carol');
    expect(await second.json()).toMatchObject({
      status: 'decided',
      decision: 'respond',
      approvers: ['carol'],
    });
    const run = await system.waitForStatus(runId, 'completed');
    expect(run.messages.find((m) => m.role === 'tool')?.content).toContain(TEXT);
    expect((await system.service('payments')).restarts).toBe(before);
    // The first decision wins: nothing counts after it.
    const late = await fetch(`${system.approvalUrl}/approvals/${requestId}/decisions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...system.bearer('carol') },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(late.status).toBe(409);
  });
});

// The approver's context reaches Slack and email (run input, model text, tool, preview, route, votes, time left in
// words), both follow an edit of the arguments (buttons and links bound to its revision), and the API refuses what must
// not be: invalid or own edits, rules that would cover a manual_only tool or their author's calls, notices done twice.
import type { ApprovalView, StandingRule } from '@countersign/contracts';
import { UX_APPROVALS } from './support/approver-ux';
import { waitFor } from './support/redis';
import { linkIn, TestSystem } from './support/system';

jest.setTimeout(60_000);

const slackUser = (id: 'bob' | 'carol' | 'dave') => ({
  slackUserId: UX_APPROVALS.approvers.find((a) => a.id === id)!.slackUserId,
});

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start('ux-channels', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
  });
});
afterAll(() => system?.close());

/** A run of alice's that parks on scaling payments (two approvers of finance), with what the model said. */
async function scalePayments(replicas: number) {
  const runId = await system.startRun(
    [
      {
        text: 'payments is slow; scaling it up.',
        toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas } }],
      },
      { text: 'scaled' },
    ],
    { input: 'keep payments fast during the sale' },
  );
  const call = await system.waitForPendingCall(runId);
  await system.waitForApproval(call.callId, 'dave');
  return { runId, call };
}

const decide = (callId: string, as: string, body: Record<string, unknown>) =>
  system.api<Record<string, unknown>>('POST', `/approvals/${callId}/decisions`, as, body);

describe('Slack', () => {
  it('shows the context, the progress of the quorum and an edit, and every message the outcome', async () => {
    const { runId, call } = await scalePayments(6);
    const posted = await waitFor(
      () => system.slack.find('chat.postMessage', call.callId).find((c) => c.reply?.ok),
      'Slack message',
    );
    expect(posted.body.channel).toBe('#finance-approvals');
    const blocks = JSON.stringify(posted.body.blocks);
    for (const part of [
      '*Run for*\\nalice: “keep payments fast during the sale”',
      '*Model said*\\n“payments is slow; scaling it up.”',
      '*Tool*\\nscale_service (confirm): Sets the number of replicas of a service.',
      '*Preview*\\n*payments: 2 → 6 replicas*',
      '*Precondition*\\n{\\"replicas\\":2}',
      '*Routed by*\\nrule “payments need two approvers”: args.service \\"payments\\" matches \\"payments*\\"',
      '*Approvals*\\nnone yet (needs 2)',
      '*Expires*\\nin 30 min',
    ])
      expect(blocks).toContain(part);

    // dave's vote: the message shows who has voted.
    expect((await system.slackClick(call.callId, slackUser('dave'), 'approve')).json).toMatchObject({
      ok: true,
      status: 'vote_recorded',
    });
    await waitFor(() => system.slack.find('chat.update', '1 of 2: dave approved')[0], 'progress in Slack');

    // carol edits in the inbox (the API): the message shows the edited call, its buttons bound to revision 1.
    expect(
      (
        await decide(call.callId, 'carol', {
          decision: 'approve',
          args: { service: 'payments', replicas: 3 },
        })
      ).status,
    ).toBe(202);
    const update = await waitFor(
      () => system.slack.find('chat.update', 'Edited by *carol*').at(-1),
      'edit in Slack',
    );
    expect(JSON.stringify(update.body.blocks)).toContain(`${call.requestId}|0|1`);
    // A click on a button of the arguments before the edit counts for nothing.
    expect((await system.slackClick(call.callId, slackUser('dave'), 'approve')).json).toMatchObject({
      ok: false,
      error: expect.stringContaining('edited the arguments since you looked'),
    });
    expect(
      (await system.slackClick(call.callId, slackUser('dave'), 'approve', { rev: 1 })).json,
    ).toMatchObject({
      ok: true,
      status: 'decided',
    });
    await system.waitForStatus(runId, 'completed');
    expect((await system.service('payments')).replicas).toBe(3);
    await waitFor(
      () => system.slack.find('chat.update', 'Approved by carol, dave (arguments edited by carol)')[0],
      'outcome in Slack',
    );
  });
});

describe('email', () => {
  it('sends the context, and its page shows expiry in words, who voted, one reason box under both buttons and a respond form', async () => {
    const { runId, call } = await scalePayments(5);
    const { mail, link } = await system.mailTo('carol', call.callId);
    // (The capture reads the mail's bytes as Latin-1, so the checks keep to ASCII between the quotes and arrows.)
    for (const line of [
      /Run for: alice: .+keep payments fast during the sale.+/,
      /Model said: .+payments is slow; scaling it up\..+/,
      /Tool: scale_service \(confirm\): Sets the number of replicas of a service\./,
      /Preview: payments: \d+ .+ 5 replicas/,
      /Precondition: \{"replicas":\d+\}/,
      /Routed by: rule .+payments need two approvers.+: args\.service "payments" matches "payments\*"/,
      /Approvals: none yet \(needs 2\)/,
      /Expires: in 30 min/,
    ])
      expect(mail.text).toMatch(line);

    expect((await decide(call.callId, 'dave', { decision: 'approve' })).status).toBe(202);
    const page = await (await fetch(link)).text();
    const view = (await system.api<ApprovalView>('GET', `/approvals/${call.callId}`, 'carol')).json;
    expect(page).not.toContain(view.expiresAt); // no raw timestamp
    expect(page).toMatch(/expires in (29|30) min/);
    expect(page).toContain('1 of 2: dave approved');
    // One form for Approve and Deny with the reason box under both; then the respond form, with its own text.
    expect(page.match(/<form /g)).toHaveLength(2);
    const [approve, deny, reason, second, response, respond] = [
      'value="approve"',
      'value="deny"',
      'name="reason"',
      '<form method="post" action="/approve/',
      'name="response"',
      'value="respond"',
    ].map((s, i) => (i === 3 ? page.lastIndexOf(s) : page.indexOf(s)));
    expect(approve).toBeGreaterThan(0);
    expect(deny).toBeGreaterThan(approve);
    expect(reason).toBeGreaterThan(deny);
    expect(second).toBeGreaterThan(reason);
    expect(response).toBeGreaterThan(second);
    expect(respond).toBeGreaterThan(response);

    const posted = await fetch(link, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision: 'deny', reason: 'not during the sale' }).toString(),
    });
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain('Denied. The agent is told, with your reason,');
    await system.waitForStatus(runId, 'completed');
  });

  it('asks again about edited arguments with a new link; the link to the earlier arguments decides nothing', async () => {
    const { runId, call } = await scalePayments(7);
    const { link: oldLink } = await system.mailTo('dave', call.callId);
    expect(
      (
        await decide(call.callId, 'carol', {
          decision: 'approve',
          args: { service: 'payments', replicas: 2 },
        })
      ).status,
    ).toBe(202);
    const edited = await waitFor(
      () =>
        system.smtp
          .to('dave@example.test', 'Edited, approval needed')
          .find((m) => m.text.includes('"replicas": 2')),
      'the email about the edited call',
    );
    expect((await fetch(oldLink)).status).toBe(409);
    const refused = await fetch(oldLink, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'decision=approve',
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('edited the arguments since you looked');
    const newLink = linkIn(edited.text)!;
    const approved = await fetch(newLink, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'decision=approve',
    });
    expect(await approved.text()).toContain(
      'Approved. The agent runs scale_service with the edited arguments now',
    );
    await system.waitForStatus(runId, 'completed');
    expect((await system.service('payments')).replicas).toBe(2);
  });
});

describe('edits through the API', () => {
  it('refuses edited arguments that do not fit the tool, a deny with arguments, a stale view, and the requester', async () => {
    const { runId, call } = await scalePayments(8);
    expect(
      await decide(call.callId, 'carol', {
        decision: 'approve',
        args: { service: 'payments', replicas: 999 },
      }),
    ).toMatchObject({
      status: 400,
      json: { error: 'invalid_edit', message: 'args.replicas: must be <= 20' },
    });
    expect(
      await decide(call.callId, 'carol', {
        decision: 'approve',
        args: { service: 'payments', replicas: 2, force: true },
      }),
    ).toMatchObject({
      status: 400,
      json: { message: 'args.force: is not an argument of this tool' },
    });
    expect(
      await decide(call.callId, 'carol', { decision: 'deny', args: { service: 'payments', replicas: 2 } }),
    ).toMatchObject({
      status: 400,
      json: { message: expect.stringContaining('args: edited arguments come only with decision "approve"') },
    });
    // alice asked for it: she may not edit it into an approval. She is in none of its groups, so to her it is not
    // there at all: 404, like an unknown request (issue 24, finding 8b).
    const own = await system.api('POST', `/approvals/${call.callId}/decisions`, 'alice', {
      decision: 'approve',
      args: { service: 'payments', replicas: 1 },
    });
    expect(own.status).toBe(404);
    // Nothing of that counted: no revision, no vote.
    const view = (await system.api<ApprovalView>('GET', `/approvals/${call.callId}`, 'carol')).json;
    expect(view.edited).toBeUndefined();
    expect(view.votes).toEqual([]);

    expect(
      (await decide(call.callId, 'dave', { decision: 'approve', args: { service: 'payments', replicas: 3 } }))
        .status,
    ).toBe(202);
    // carol saw the arguments before dave's edit: her approval of them is refused.
    expect(
      await decide(call.callId, 'carol', { decision: 'approve', fingerprint: call.fingerprint }),
    ).toMatchObject({
      status: 409,
      json: { error: 'arguments_edited' },
    });
    await decide(call.callId, 'carol', { decision: 'deny' });
    await system.waitForStatus(runId, 'completed');
    // bob is in none of the request's groups: the auditor reads the entry.
    const decision = await system.waitForAudit(call.callId, 'decision.published', 'auditor');
    expect(decision.detail).toMatchObject({ decision: 'deny' });
  });
});

describe('standing rules through the API', () => {
  const rule = (as: string, body: Record<string, unknown>) =>
    system.api<StandingRule & { message?: string }>('POST', '/standing-rules', as, body);

  it('are written only by rule-writers, never for a manual_only tool, an unknown tool, or the author’s own calls', async () => {
    expect((await rule('bob', { tool: 'restart_service', requester: 'alice' })).status).toBe(403);
    expect(await rule('carol', { tool: 'delete_volume', requester: 'alice' })).toMatchObject({
      status: 403,
      json: { message: 'tool: delete_volume is manual_only: a person must do it, so no rule may decide it' },
    });
    expect((await rule('carol', { tool: 'restart_service', requester: 'carol' })).status).toBe(403);
    expect(await rule('carol', { tool: 'launch_rockets', requester: 'alice' })).toMatchObject({
      status: 400,
    });
    expect(await rule('carol', { tool: 'restart_service', requester: 'nobody-here' })).toMatchObject({
      status: 400,
    });
    expect(await rule('carol', { tool: 'restart_service' })).toMatchObject({
      status: 400,
      json: { message: expect.stringContaining('requester: is required') },
    });
    expect(
      await rule('carol', { tool: 'restart_service', requester: 'alice', expiresIn: '365d' }),
    ).toMatchObject({
      status: 400,
      json: { message: expect.stringContaining('expiresIn: must be from 1h to 90d') },
    });
    expect((await system.api('GET', '/standing-rules', 'mallory')).status).toBe(403);
    expect((await system.api('DELETE', '/standing-rules/sr-000000000000', 'carol')).status).toBe(404);
  });

  it('decides only the calls whose arguments match, expires in 7 days by default, and is audited', async () => {
    const created = await rule('carol', {
      tool: 'restart_service',
      requester: 'alice',
      args: { service: 'api' },
      note: 'api restarts are routine',
    });
    expect(created.status).toBe(201);
    const days = (Date.parse(created.json.expiresAt) - Date.parse(created.json.createdAt)) / 86_400_000;
    expect(days).toBe(7);
    try {
      const byRule = await system.startRun([
        { toolCalls: [{ name: 'restart_service', args: { service: 'api' } }] },
        { text: 'ok' },
      ]);
      await system.waitForStatus(byRule, 'completed');
      const asks = await system.startRun([
        { toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] },
        { text: 'ok' },
      ]);
      const waiting = await system.waitForPendingCall(asks);
      expect((await system.waitForApproval(waiting.callId)).status).toBe('pending');
      await decide(waiting.callId, 'bob', { decision: 'deny' });
      // A rule written by hand is about no request: audit readers see its entries.
      const audit = await system.audit({}, 'auditor');
      expect(audit.find((e) => e.type === 'rule.created')).toMatchObject({
        actor: 'carol',
        detail: { rule: { id: created.json.id, args: { service: 'api' } } },
      });
    } finally {
      expect((await system.api('DELETE', `/standing-rules/${created.json.id}`, 'carol')).status).toBe(200);
    }
    expect((await system.audit({}, 'auditor')).find((e) => e.type === 'rule.revoked')).toMatchObject({
      actor: 'carol',
    });
  });

  it('is not made from a request without a trust suggestion', async () => {
    const runId = await system.startRun([
      { toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] },
      { text: 'ok' },
    ]);
    const call = await system.waitForPendingCall(runId);
    await system.waitForApproval(call.callId);
    expect(await rule('carol', { fromCallId: call.callId })).toMatchObject({
      status: 409,
      json: { message: expect.stringContaining('carries no trust suggestion') },
    });
    await decide(call.callId, 'bob', { decision: 'deny' });
  });
});

describe('manual-step notices through the API', () => {
  it('are marked done once, by an approver who is not the requester; a request is not a notice', async () => {
    const runId = await system.startRun([
      {
        toolCalls: [
          { id: 'api-manual', name: 'delete_volume', args: { volume: 'pg-data' } },
          { id: 'api-confirm', name: 'restart_service', args: { service: 'web' } },
        ],
      },
      { text: 'ok' },
    ]);
    await system.waitForPendingCall(runId);
    await system.waitForApproval('api-manual');
    await system.waitForApproval('api-confirm');
    const done = (callId: string, as: string, body: object = {}) =>
      system.api<{ message?: string; next?: string }>('POST', `/approvals/${callId}/done`, as, body);
    // alice asked for it and is in none of its groups: 404, like an unknown request (issue 24, finding 8b).
    expect((await done('api-manual', 'alice')).status).toBe(404);
    expect(await done('api-confirm', 'bob')).toMatchObject({ status: 409, json: { error: 'not_a_notice' } });
    expect(await done('api-manual', 'bob', { note: 'x'.repeat(2_001) })).toMatchObject({ status: 400 });
    expect(await done('api-manual', 'bob', { note: 'done by hand' })).toMatchObject({ status: 200 });
    expect(await done('api-manual', 'carol')).toMatchObject({
      status: 409,
      json: { message: 'already marked done by bob' },
    });
    await decide('api-confirm', 'bob', { decision: 'deny' });
    await system.waitForStatus(runId, 'completed');
    const view = (await system.api<ApprovalView>('GET', '/approvals/api-manual', 'bob')).json;
    expect(view).toMatchObject({ status: 'decided', done: { by: 'bob', note: 'done by hand' } });
  });
});

// Issue 24, findings 1, 8a and 8b, against one approval service (real Redis, real HTTP, a stand-in Slack API and a
// real SMTP server): every revision of a request is routed like a new request, one rule says who may decide it, a
// standing rule never decides a human checkpoint or a route that needs more than one approver, and a request that is
// not routed to the caller answers 404 on every route, exactly like an unknown one.
import { randomBytes } from 'node:crypto';
import type { ApprovalRequest, StandingRule } from '@countersign/contracts';
import { ToolCatalog } from '@countersign/shared-records';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { StandingRuleStore } from '../../apps/approval-service/src/standing-rules/standing-rule-store';
import { VoteStore } from '../../apps/approval-service/src/votes/vote-store';
import { approvalRequest, AgentSideQueues, approvalServiceEnv, callAs } from '../support/approval-harness';
import { FakeSlackApi } from '../support/fake-slack-api';
import { approvalsConfig, approver, group, PAYMENTS_NEED_TWO } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, uniquePrefixes, waitFor } from '../support/redis';
import { SmtpCapture } from '../support/smtp-capture';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('revisions');
const APPROVALS = approvalsConfig({
  approvers: [approver('bob'), approver('carol', { roles: ['rule-writer'] }), approver('dave')],
  groups: [group('ops', ['bob', 'carol'], '#ops'), group('finance', ['carol', 'dave'], '#finance')],
  rules: [
    PAYMENTS_NEED_TWO,
    { name: 'web and api', match: { args: { service: ['web', 'api'] } }, groups: ['ops'] },
    { name: 'gates', match: { tool: 'runbook_gate' }, groups: ['ops'] },
    { name: 'manual steps', match: { tier: 'manual_only' }, groups: ['ops'] },
  ],
  // No default group: a call of any other service routes nowhere.
  defaultGroup: undefined,
});

/** The scale_service of the demo tools as the worker describes it in the tool catalog (edits are checked against it). */
const SCALE_SCHEMA = {
  type: 'object',
  properties: {
    service: { type: 'string', minLength: 1 },
    replicas: { type: 'integer', minimum: 0, maximum: 20 },
  },
  required: ['service', 'replicas'],
  additionalProperties: false,
};
const SCALE_HASH = 'a'.repeat(64);
const GATE_HASH = 'b'.repeat(64);

let service: RunningApprovalService;
let queues: AgentSideQueues;
const slack = new FakeSlackApi();
const smtp = new SmtpCapture();

beforeAll(async () => {
  const [slackUrl, smtpUrl] = await Promise.all([slack.start(), smtp.start()]);
  service = await startApprovalService(
    approvalServiceEnv(prefixes, APPROVALS, {
      SLACK_BOT_TOKEN: 'xoxb-revisions',
      SLACK_SIGNING_SECRET: 'revisions-slack-secret',
      SLACK_API_URL: slackUrl,
      SMTP_URL: smtpUrl,
      NOTIFY_BACKOFF: '50ms',
    }),
    { port: 0, host: '127.0.0.1' },
  );
  queues = new AgentSideQueues(prefixes);
  await service.app.get(ToolCatalog).publish([
    {
      definitionHash: SCALE_HASH,
      entry: {
        name: 'scale_service',
        description: 'Sets replicas',
        tier: 'confirm',
        argsSchema: SCALE_SCHEMA,
      },
    },
    {
      definitionHash: GATE_HASH,
      entry: { name: 'runbook_gate', description: 'A runbook gate', tier: 'confirm', argsSchema: {} },
    },
  ]);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await Promise.all([slack.stop(), smtp.stop()]);
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

/** As an approver or a default test principal (alice, auditor, …), each with its test token. */
const api = (method: string, path: string, as: string, body?: unknown) =>
  callAs(service.url, testToken(as), method, path, body);

const decide = (id: string, as: string, body: Record<string, unknown>) =>
  api('POST', `/approvals/${id}/decisions`, as, body);

/** alice's scale_service call, stored and routed. */
async function scale(args: Record<string, unknown>, over: Partial<ApprovalRequest> = {}) {
  const request = await queues.submit(
    approvalRequest({ toolName: 'scale_service', toolDefinitionHash: SCALE_HASH, args, ...over }),
  );
  await waitFor(
    async () => (await service.app.get(RequestStore).get(request.requestId)) !== undefined,
    `${request.requestId} stored`,
  );
  return request;
}

async function auditOf(callId: string) {
  const { json } = await api('GET', `/audit?callId=${callId}`, 'auditor');
  return json as { type: string; actor?: string; detail: Record<string, unknown> }[];
}

/** What the service answers for a request it does not know, on the same route, with `id` in place of the unknown one. */
async function unknownAnswer(send: (id: string) => Promise<{ status: number; json: unknown }>, id: string) {
  const unknown = `call-unknown-${randomBytes(4).toString('hex')}`;
  const answer = await send(unknown);
  return JSON.parse(JSON.stringify(answer).split(unknown).join(id)) as { status: number; json: unknown };
}

// ---- finding 1: every revision is routed -----------------------------------------------------------------

describe('an edit that moves a call to another route', () => {
  it('is routed anew: the editor outside the new groups does not decide it, the new groups are asked and decide it', async () => {
    const request = await scale({ service: 'web', replicas: 3 });
    const edited = { service: 'payments-eu', replicas: 20 };

    const answer = await decide(request.requestId, 'bob', { decision: 'approve', args: edited });
    expect(answer).toMatchObject({
      status: 202,
      json: {
        status: 'rerouted',
        requestId: request.requestId,
        route: { groups: ['finance'], quorum: 2, rule: 'payments need two approvers' },
        next: expect.stringContaining('finance'),
      },
    });
    expect(await queues.decision(request.callId)).toBeUndefined();

    // The stored request and every read of it show the revision's route.
    const view = await api('GET', `/approvals/${request.requestId}`, 'dave');
    expect(view).toMatchObject({
      status: 200,
      json: {
        status: 'pending',
        groups: ['finance'],
        quorum: 2,
        route: { rule: 'payments need two approvers', why: 'args.service "payments-eu" matches "payments*"' },
        edited: { args: edited, by: 'bob', rev: 1 },
        votes: [],
      },
    });
    const listed = (await api('GET', '/approvals?status=pending', 'dave')).json as {
      request: { requestId: string };
    }[];
    expect(listed.map((a) => a.request.requestId)).toContain(request.requestId);

    // finance is told as for a new request: its Slack channel gets a message, its members an email.
    await waitFor(
      () => slack.find('chat.postMessage', request.requestId).find((c) => c.body.channel === '#finance'),
      'a Slack message in #finance',
    );
    await waitFor(() => smtp.to('dave@example.test', '"payments-eu"')[0], 'an email to dave');

    // bob may read what became of his edit, but not decide it.
    expect(await decide(request.requestId, 'bob', { decision: 'approve' })).toMatchObject({
      status: 403,
      json: { error: 'unauthorized_approver' },
    });

    // The audit keeps both routes, and the editor reads it like the request (maySee, the one rule): bob took part.
    const asEditor = (await api('GET', `/audit?callId=${request.callId}`, 'bob')).json as { type: string }[];
    expect(asEditor.map((e) => e.type)).toEqual(
      expect.arrayContaining(['request.created', 'request.rerouted']),
    );
    const rerouted = (await auditOf(request.callId)).find((e) => e.type === 'request.rerouted');
    expect(rerouted).toMatchObject({
      actor: 'bob',
      detail: {
        requestId: request.requestId,
        rev: 1,
        editedArgs: edited,
        requestedArgs: { service: 'web', replicas: 3 },
        from: { rule: 'web and api', groups: ['ops'], quorum: 1 },
        to: { rule: 'payments need two approvers', groups: ['finance'], quorum: 2 },
        editorCounts: false,
      },
    });

    expect(await decide(request.requestId, 'dave', { decision: 'approve' })).toMatchObject({
      status: 202,
      json: { status: 'vote_recorded', approvals: 1, quorum: 2 },
    });
    expect(await decide(request.requestId, 'carol', { decision: 'approve' })).toMatchObject({
      status: 200,
      json: { status: 'decided', approvers: ['dave', 'carol'] },
    });
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'approve',
      approvers: ['dave', 'carol'],
      args: edited,
    });
  });

  it("counts the editor's approval when the editor may decide the new route", async () => {
    const request = await scale({ service: 'api', replicas: 3 });
    const answer = await decide(request.requestId, 'carol', {
      decision: 'approve',
      args: { service: 'payments', replicas: 4 },
    });
    expect(answer).toMatchObject({
      status: 202,
      json: { status: 'vote_recorded', approvals: 1, quorum: 2, route: { groups: ['finance'], quorum: 2 } },
    });
    expect(await decide(request.requestId, 'dave', { decision: 'approve' })).toMatchObject({
      status: 200,
      json: { status: 'decided', approvers: ['carol', 'dave'] },
    });
  });

  it('keeps the route of an edit that routes the same, and decides as before', async () => {
    const request = await scale({ service: 'web', replicas: 3 });
    expect(
      await decide(request.requestId, 'bob', { decision: 'approve', args: { service: 'api', replicas: 4 } }),
    ).toMatchObject({ status: 200, json: { status: 'decided', approvers: ['bob'] } });
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      args: { service: 'api', replicas: 4 },
    });
    expect((await auditOf(request.callId)).map((e) => e.type)).not.toContain('request.rerouted');
  });

  it('refuses an edit that routes nowhere, audits it, and changes nothing', async () => {
    const request = await scale({ service: 'web', replicas: 3 });
    expect(
      await decide(request.requestId, 'bob', {
        decision: 'approve',
        args: { service: 'nowhere', replicas: 1 },
      }),
    ).toMatchObject({
      status: 400,
      json: { error: 'unroutable_edit', message: expect.stringMatching(/^args: .*no approver route/) },
    });
    const view = (await api('GET', `/approvals/${request.requestId}`, 'bob')).json;
    expect(view).toMatchObject({ status: 'pending', groups: ['ops'], quorum: 1, votes: [] });
    expect(view.edited).toBeUndefined();
    expect((await auditOf(request.callId)).find((e) => e.type === 'decision.rejected')).toMatchObject({
      actor: 'bob',
      detail: { reason: 'unroutable_edit', editedArgs: { service: 'nowhere', replicas: 1 } },
    });
    expect(await decide(request.requestId, 'bob', { decision: 'deny' })).toMatchObject({ status: 200 });
  });

  it('refuses a vote whose check was made on a route that changed before it was written', async () => {
    const request = await scale({ service: 'web', replicas: 3 });
    const store = service.app.get(RequestStore);
    const votes = service.app.get(VoteStore);
    const before = (await store.get(request.requestId))!;
    // carol's edit routes it to finance between bob's check and his write.
    expect(
      (
        await decide(request.requestId, 'carol', {
          decision: 'approve',
          args: { service: 'payments', replicas: 1 },
        })
      ).status,
    ).toBe(202);
    await expect(
      votes.recordVote({
        requestId: request.requestId,
        approver: 'bob',
        decision: 'approve',
        channel: 'api',
        checked: { rev: before.edited?.rev ?? 0, routeVersion: before.routeVersion },
        counts: true,
      }),
    ).rejects.toMatchObject({ reason: 'arguments_edited' });
    // An escalation (a route version of its own) between the check and the write refuses it too.
    const now = (await store.get(request.requestId))!;
    await expect(
      votes.recordVote({
        requestId: request.requestId,
        approver: 'dave',
        decision: 'approve',
        channel: 'api',
        checked: { rev: now.edited!.rev, routeVersion: now.routeVersion - 1 },
        counts: true,
      }),
    ).rejects.toMatchObject({ reason: 'route_changed' });
    expect((await store.get(request.requestId))!.votes.map((v) => v.approver)).toEqual(['carol']);
  });
});

// ---- finding 8b: 404 for what is not yours -----------------------------------------------------------------

describe('a request that is not routed to the caller', () => {
  it('answers 404 on every route, exactly like an unknown request', async () => {
    const request = await scale({ service: 'web', replicas: 2 });
    const notice = await queues.submit(
      approvalRequest({
        toolName: 'delete_volume',
        tier: 'manual_only',
        reason: 'manual_step',
        args: { v: 1 },
      }),
    );
    await waitFor(
      async () => (await api('GET', `/approvals/${notice.requestId}`, 'bob')).status === 200,
      'notice',
    );

    const routes: [string, (id: string) => Promise<{ status: number; json: unknown }>][] = [
      ['GET /approvals/:id', (id) => api('GET', `/approvals/${id}`, 'dave')],
      ['POST /approvals/:id/decisions', (id) => decide(id, 'dave', { decision: 'approve' })],
      [
        'POST /approvals/:id/decisions (an edit)',
        (id) => decide(id, 'dave', { decision: 'approve', args: { service: 'web', replicas: 1 } }),
      ],
      ['POST /approvals/:id/done', (id) => api('POST', `/approvals/${id}/done`, 'dave', {})],
    ];
    for (const [route, send] of routes) {
      for (const id of [request.requestId, request.callId, notice.requestId]) {
        const hidden = await send(id);
        expect({ route, id, ...hidden }).toEqual({ route, id, ...(await unknownAnswer(send, id)) });
        expect(hidden.status).toBe(404);
      }
    }
    // The requester in none of its groups sees nothing either.
    const alice = await decide(request.requestId, 'alice', { decision: 'approve' });
    expect(alice).toEqual(
      await unknownAnswer((id) => decide(id, 'alice', { decision: 'approve' }), request.requestId),
    );
    // Nothing was counted; the probes are in the audit for its readers.
    expect((await api('GET', `/approvals/${request.requestId}`, 'bob')).json).toMatchObject({ votes: [] });
    expect(
      (await auditOf(request.callId)).filter((e) => e.type === 'decision.rejected').map((e) => e.actor),
    ).toEqual(expect.arrayContaining(['dave', 'alice']));
    await decide(request.requestId, 'bob', { decision: 'deny' });
    await api('POST', `/approvals/${notice.requestId}/done`, 'bob', {});
  });

  it('answers 403 to a requester who can see it (a member of its groups): that reveals nothing new', async () => {
    const request = await scale({ service: 'web', replicas: 2 }, { requester: 'carol' });
    expect(await decide(request.requestId, 'carol', { decision: 'approve' })).toMatchObject({
      status: 403,
      json: { error: 'self_approval' },
    });
    await decide(request.requestId, 'bob', { decision: 'deny' });
  });
});

// ---- finding 8a: standing rules ----------------------------------------------------------------------------

describe('standing rules', () => {
  const write = (body: Record<string, unknown>) => api('POST', '/standing-rules', 'carol', body);

  it('are refused when written for runbook_gate, or for calls that could route to a quorum above one', async () => {
    expect(await write({ tool: 'runbook_gate', requester: 'alice' })).toMatchObject({
      status: 403,
      json: { message: expect.stringContaining('runbook_gate') },
    });
    expect(await write({ tool: 'scale_service', requester: 'alice' })).toMatchObject({
      status: 403,
      json: { message: expect.stringContaining('payments need two approvers') },
    });
    expect(
      await write({ tool: 'scale_service', requester: 'alice', args: { service: 'pay*' } }),
    ).toMatchObject({
      status: 403,
    });
    const narrow = await write({ tool: 'scale_service', requester: 'alice', args: { service: 'web' } });
    expect(narrow.status).toBe(201);
    await api('DELETE', `/standing-rules/${(narrow.json as StandingRule).id}`, 'carol');
  });

  it('do not decide a runbook_gate call or a call routed to a quorum above one, even when one covers it', async () => {
    // Rules stored as a rule written before the routing changed would be: the check at match time still holds.
    const rules = service.app.get(StandingRuleStore);
    const stored = (tool: string): StandingRule => ({
      id: StandingRuleStore.newId(),
      tool,
      requester: 'mallory',
      createdBy: 'carol',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const [scaleRule, gateRule] = [stored('scale_service'), stored('runbook_gate')];
    await rules.add(scaleRule);
    await rules.add(gateRule);
    try {
      const payments = await scale({ service: 'payments', replicas: 5 }, { requester: 'mallory' });
      const gate = await queues.submit(
        approvalRequest({
          toolName: 'runbook_gate',
          toolDefinitionHash: GATE_HASH,
          requester: 'mallory',
          args: {},
        }),
      );
      const web = await scale({ service: 'web', replicas: 5 }, { requester: 'mallory' });
      expect(await queues.waitForDecision(web.callId)).toMatchObject({
        decidedBy: 'policy',
        rule: scaleRule.id,
      });
      for (const request of [payments, gate]) {
        const view = await waitFor(async () => {
          const read = await api('GET', `/approvals/${request.requestId}`, 'carol');
          return read.status === 200 ? read.json : undefined;
        }, `${request.requestId} stored`);
        expect({ tool: request.toolName, status: view.status }).toEqual({
          tool: request.toolName,
          status: 'pending',
        });
        expect(await queues.decision(request.callId)).toBeUndefined();
        await decide(request.requestId, 'carol', { decision: 'deny' });
      }
    } finally {
      await rules.revoke(scaleRule.id);
      await rules.revoke(gateRule.id);
    }
  });
});

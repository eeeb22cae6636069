// Escalation end to end: a rule that also notifies a second group after a delay, against real Redis, the Slack
// stand-in and a real SMTP server. Before the delay only the first group sees and may decide the request; after
// it the second group is notified on Slack and by email and may decide; an expiry is shown on every channel.
import { fingerprint, verifyPayloadSignature } from '@countersign/authorization';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ApprovalServiceQueueName, SignedDecisionSchema, type ApprovalRequest } from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import type { TimerKind } from '../../apps/approval-service/src/timers/timer-member';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { TimersService } from '../../apps/approval-service/src/timers/timers.service';
import { DueTimers } from '../../apps/approval-service/src/timers/due-timers';
import { slackSignature } from '../../apps/approval-service/src/channels/slack/slack-signature';
import { approvalRequest, AgentSideQueues, approvalServiceEnv, callAs } from '../support/approval-harness';
import { FakeSlackApi } from '../support/fake-slack-api';
import { approvalsConfig, approvers, group } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';
import { SmtpCapture } from '../support/smtp-capture';

jest.setTimeout(20_000);

const prefixes = uniquePrefixes('escalation');
const SLACK_SIGNING_SECRET = 'slack-signing-secret-for-tests';
const DECISION_SIGNING_SECRET = 'decision-secret-0123456789';
// bob is in ops only, frank in leads only, nina in the groups that share #ops; requests come from alice, who
// approves nothing.
const APPROVALS = approvalsConfig({
  approvers: approvers('bob', 'frank', 'nina'),
  groups: [
    group('ops', ['bob'], '#ops'),
    group('leads', ['frank'], '#leads'),
    group('night', ['nina'], '#ops'),
    group('backup', ['nina'], '#ops'),
  ],
  // Every request here matches a rule.
  defaultGroup: undefined,
  rules: [
    // Long enough before escalation that the "before" checks never race the timer.
    {
      name: 'escalates',
      match: { tool: 'scale_service' },
      groups: ['ops'],
      expiresIn: '30s',
      escalation: { after: '2s', groups: ['leads'] },
    },
    {
      name: 'escalates then expires',
      match: { tool: 'purge_cache' },
      groups: ['ops'],
      expiresIn: '2500ms',
      escalation: { after: '300ms', groups: ['leads'] },
    },
    {
      name: 'groups sharing a channel',
      match: { tool: 'rotate_keys' },
      groups: ['ops', 'night'],
      expiresIn: '30s',
      escalation: { after: '300ms', groups: ['leads', 'backup'] },
    },
  ],
});

let service: RunningApprovalService;
let queues: AgentSideQueues;
const slack = new FakeSlackApi();
const smtp = new SmtpCapture();

beforeAll(async () => {
  const [slackUrl, smtpUrl] = await Promise.all([slack.start(), smtp.start()]);
  service = await startApprovalService(
    approvalServiceEnv(prefixes, APPROVALS, {
      DECISION_SIGNING_SECRET,
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET,
      SLACK_API_URL: slackUrl,
      SMTP_URL: smtpUrl,
      NOTIFY_BACKOFF: '50ms',
      TIMER_SWEEP_MS: '50',
    }),
    { port: 0, host: '127.0.0.1' },
  );
  queues = new AgentSideQueues(prefixes);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await Promise.all([slack.stop(), smtp.stop()]);
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

async function clickInSlack(requestId: string, userId: string, channelId: string) {
  const body = new URLSearchParams({
    payload: JSON.stringify({
      type: 'block_actions',
      user: { id: userId },
      channel: { id: channelId },
      actions: [{ action_id: 'countersign_approve', value: `${requestId}|0` }],
    }),
  }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${service.url}/slack/interactions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': slackSignature(SLACK_SIGNING_SECRET, timestamp, body),
    },
    body,
  });
  return { status: res.status, json: (await res.json()) as { ok?: boolean; error?: string } };
}

const api = (method: string, path: string, as: string, body?: unknown) =>
  callAs(service.url, testToken(as), method, path, body);

async function auditTypes(callId: string): Promise<{ type: string; detail: Record<string, unknown> }[]> {
  return (await api('GET', `/audit?callId=${callId}`, 'bob')).json;
}

/** The Slack message about the call posted to `channel` (as the SDK sent it), once it is there. */
const postedTo = (callId: string, channel: string) =>
  waitFor(
    () => slack.find('chat.postMessage', callId).find((c) => c.body.channel === channel && c.reply?.ok),
    `Slack message for ${callId} in ${channel}`,
  );

const mailTo = (who: string, needle: string) =>
  waitFor(() => smtp.to(`${who}@example.test`, needle)[0], `mail to ${who} containing ${needle}`);

const timerDueAt = (kind: TimerKind, requestId: string) =>
  service.app.get(DueTimers).dueAt({ kind, requestId, attempt: 0 });

/** Every notification job has run (none waiting, active or delayed): only then is "not sent" a fact. */
async function notificationsDrained(): Promise<void> {
  const notifications = new Queue(ApprovalServiceQueueName.Notifications, {
    connection: queues.connection,
    prefix: prefixes.queuePrefix,
  });
  try {
    await waitFor(async () => {
      const counts = await notifications.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    }, 'notification queue drained');
  } finally {
    await notifications.close();
  }
}

const slackChannelsOf = (callId: string) =>
  slack.find('chat.postMessage', callId).map((c) => String(c.body.channel));

// ---- tests ---------------------------------------------------------------------------------------------

describe('escalation', () => {
  it('notifies only the first group until the delay, then the second group too, whose member may then decide', async () => {
    const request: ApprovalRequest = await queues.submit(
      approvalRequest({ toolName: 'scale_service', args: { service: 'web', replicas: 6, ticket: 'ESC-1' } }),
    );
    const { callId, requestId } = request;

    // Before escalation: ops is told, leads is not, and frank (leads only) may neither see nor decide.
    await postedTo(callId, '#ops');
    await mailTo('bob', '"ticket": "ESC-1"');
    expect(await api('GET', `/approvals/${callId}`, 'frank')).toMatchObject({ status: 404 });
    expect(await clickInSlack(requestId, 'U_FRANK', 'C-ops')).toEqual({
      status: 200,
      json: { ok: false, error: 'you are not an approver for this request' },
    });
    // Not routed to frank yet: the same answer as an unknown request (issue 24, finding 8b).
    expect(
      await api('POST', `/approvals/${callId}/decisions`, 'frank', { decision: 'approve' }),
    ).toMatchObject({
      status: 404,
      json: { error: 'unknown_call' },
    });
    expect(slackChannelsOf(callId)).toEqual(['#ops']);
    expect(smtp.to('frank@example.test', '"ticket": "ESC-1"')).toEqual([]);
    const before = await auditTypes(callId);
    expect(before.map((e) => e.type)).not.toContain('request.escalated');
    expect(before.filter((e) => e.type === 'decision.rejected').map((e) => e.detail.reason)).toEqual([
      'unauthorized_approver',
      'unauthorized_approver',
    ]);
    expect(await queues.decision(callId)).toBeUndefined();

    // After escalation: leads is told on Slack and by email, and the request is theirs to decide too.
    const leadsMessage = await postedTo(callId, '#leads');
    expect(JSON.stringify(leadsMessage.body.blocks)).toContain('countersign_approve');
    expect(await mailTo('frank', '"ticket": "ESC-1"')).toBeDefined();
    const escalated = await waitFor(
      async () => (await auditTypes(callId)).find((e) => e.type === 'request.escalated'),
      'request.escalated audited',
    );
    expect(escalated.detail).toEqual({ groups: ['leads'], requestId });

    // The escalation timer is done; a retried run of it (its first run failed after the script ran) notifies
    // again, idempotently, but the escalation is audited once.
    await waitFor(
      async () => (await timerDueAt('escalate', requestId)) === undefined,
      'escalation timer removed',
    );
    expect(await service.app.get(TimersService).escalate(requestId, 0)).toBe('done');
    expect((await auditTypes(callId)).filter((e) => e.type === 'request.escalated')).toHaveLength(1);
    expect((await api('GET', `/approvals/${callId}`, 'frank')).json).toMatchObject({
      status: 'pending',
      groups: ['ops', 'leads'],
    });

    expect(await clickInSlack(requestId, 'U_FRANK', 'C-leads')).toEqual({
      status: 200,
      json: { ok: true, status: 'decided' },
    });
    const decision = SignedDecisionSchema.parse(await queues.waitForDecision(callId));
    expect(decision).toMatchObject({
      callId,
      runId: request.runId,
      decision: 'approve',
      decidedBy: 'person',
      approvers: ['frank'],
      fingerprint: fingerprint('scale_service', { ticket: 'ESC-1', replicas: 6, service: 'web' }),
    });
    expect(verifyPayloadSignature(decision, DECISION_SIGNING_SECRET)).toBe(true);

    // Both groups' messages now show who decided, and no timer is left.
    for (const channel of ['C-ops', 'C-leads']) {
      await waitFor(
        () => slack.find('chat.update', 'Approved by frank').find((c) => c.body.channel === channel),
        `Slack message in ${channel} shows the outcome`,
      );
    }
    await waitFor(async () => (await timerDueAt('expire', requestId)) === undefined, 'expiry timer removed');
  });

  it('does not escalate a request that was decided before the delay', async () => {
    const { callId, requestId, requestedAt } = await queues.submit(
      approvalRequest({ toolName: 'scale_service', args: { service: 'search', ticket: 'ESC-2' } }),
    );
    await postedTo(callId, '#ops');
    expect(await api('POST', `/approvals/${callId}/decisions`, 'bob', { decision: 'deny' })).toMatchObject({
      status: 200,
    });
    await queues.waitForDecision(callId);

    // The decision removes both timers; past the escalation delay nothing was escalated or sent to leads.
    await waitFor(
      async () =>
        (await timerDueAt('escalate', requestId)) === undefined &&
        (await timerDueAt('expire', requestId)) === undefined,
      'escalation and expiry timers removed',
    );
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(requestedAt) + 2_500 - Date.now())));
    expect((await auditTypes(callId)).map((e) => e.type)).not.toContain('request.escalated');
    expect(slackChannelsOf(callId)).toEqual(['#ops']);
    expect(smtp.to('frank@example.test', '"ticket": "ESC-2"')).toEqual([]);
  });

  it('posts once to a Slack channel that several of its groups share, also after an escalation', async () => {
    const { callId } = await queues.submit(
      approvalRequest({ toolName: 'rotate_keys', args: { keyring: 'prod', ticket: 'ESC-4' } }),
    );
    await postedTo(callId, '#ops');
    await mailTo('nina', '"ticket": "ESC-4"');
    await waitFor(
      async () => (await auditTypes(callId)).some((e) => e.type === 'request.escalated'),
      'request.escalated audited',
    );
    await postedTo(callId, '#leads');
    await mailTo('frank', '"ticket": "ESC-4"');
    await notificationsDrained();
    expect(slackChannelsOf(callId).sort()).toEqual(['#leads', '#ops']);
    expect(smtp.to('nina@example.test', '"ticket": "ESC-4"')).toHaveLength(1);
  });

  it('emails an expiry only to approvers who were emailed the request', async () => {
    // The expiry mail does not name the call, so count them: other tests expire purge_cache requests too.
    const expiries = (who: string) => smtp.to(`${who}@example.test`, 'Expired: purge_cache').length;
    const before = { bob: expiries('bob'), frank: expiries('frank') };
    const { callId, requestId } = await queues.submit(
      approvalRequest({ toolName: 'purge_cache', args: { prefix: 'css/', ticket: 'ESC-5' } }),
    );
    await Promise.all([mailTo('bob', '"ticket": "ESC-5"'), mailTo('frank', '"ticket": "ESC-5"')]);
    // As if frank's request email had not gone out before the expiry (it was still queued behind a retry).
    const redis = new Redis(TEST_REDIS_URL);
    try {
      await waitFor(
        async () =>
          (await redis.hdel(service.app.get(RequestStore).keys.request(requestId), 'emailed:frank')) === 1,
        "frank's email recorded",
      );
    } finally {
      redis.disconnect();
    }

    await queues.waitForDecision(callId);
    await waitFor(() => expiries('bob') === before.bob + 1, 'the expiry emailed to bob');
    await waitFor(async () => (await timerDueAt('expire', requestId)) === undefined, 'expiry published');
    await notificationsDrained();
    expect(expiries('frank')).toBe(before.frank);
  });

  it('says an escalated request expired on every channel that showed it', async () => {
    const request = await queues.submit(
      approvalRequest({ toolName: 'purge_cache', args: { prefix: 'img/', ticket: 'ESC-3' } }),
    );
    const { callId, requestId } = request;
    const shown = await Promise.all([postedTo(callId, '#ops'), postedTo(callId, '#leads')]);
    await Promise.all([mailTo('bob', '"ticket": "ESC-3"'), mailTo('frank', '"ticket": "ESC-3"')]);

    const decision = await queues.waitForDecision(callId);
    expect(decision).toMatchObject({
      decision: 'deny',
      decidedBy: 'expired',
      reason: 'expired',
      approvers: [],
    });
    expect(verifyPayloadSignature(decision, DECISION_SIGNING_SECRET)).toBe(true);

    for (const message of shown) {
      const update = await waitFor(
        () =>
          slack
            .find('chat.update', 'expired')
            .find((c) => c.body.channel === message.reply?.channel && c.body.ts === message.reply?.ts),
        `Slack message in ${String(message.body.channel)} updated to say expired`,
      );
      expect(String(update.body.text)).toContain('expired');
      expect(JSON.stringify(update.body.blocks)).not.toContain('countersign_approve');
    }
    await Promise.all([mailTo('bob', 'Expired: purge_cache'), mailTo('frank', 'Expired: purge_cache')]);
    expect((await api('GET', `/approvals/${callId}`, 'frank')).json).toMatchObject({ status: 'expired' });
    await waitFor(
      async () =>
        (await timerDueAt('escalate', requestId)) === undefined &&
        (await timerDueAt('expire', requestId)) === undefined,
      'timers removed once the expiry is published',
    );
  });
});

// The approval service end to end: real Redis, real HTTP, a stand-in Slack API and a real SMTP server.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fingerprint, verifyPayloadSignature } from '@countersign/authorization';
import {
  ApprovalServiceQueueName,
  approvalServiceJobIds,
  jobIds,
  SignedDecisionSchema,
  type ApprovalRequest,
} from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { approvalKeys } from '../../apps/approval-service/src/core/approval-keys';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { DueTimers } from '../../apps/approval-service/src/timers/due-timers';
import { VoteStore } from '../../apps/approval-service/src/votes/vote-store';
import { slackSignature } from '../../apps/approval-service/src/channels/slack/slack-signature';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { FakeSlackApi } from '../support/fake-slack-api';
import { signInToInbox } from '../support/inbox-session';
import { approvalsConfig, approvers, asApprover, group } from '../support/fixtures';
import { bearer, testToken } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';
import { SmtpCapture } from '../support/smtp-capture';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('approvals');
const SLACK_SIGNING_SECRET = 'slack-signing-secret-for-tests';
const SLACK_BOT_TOKEN = 'xoxb-test-token';
const DECISION_SIGNING_SECRET = 'decision-secret-0123456789';
const APPROVALS = approvalsConfig({
  approvers: approvers('bob', 'carol', 'dave', 'eve'),
  groups: [group('ops', ['bob', 'carol', 'dave'], '#ops'), group('finance', ['eve'], '#finance')],
  rules: [
    { name: 'payments', match: { agent: 'ops', args: { service: 'payments*' } }, groups: ['ops'], quorum: 2 },
    { name: 'short-lived', match: { tool: 'short_lived' }, groups: ['ops'], expiresIn: '1200ms' },
    { name: 'longer-lived', match: { tool: 'longer_lived' }, groups: ['ops'], expiresIn: '4s' },
    { name: 'inbox only', match: { tool: 'inbox_only' }, groups: ['ops'], channels: ['web'] },
    { name: 'ops agent', match: { agent: 'ops' }, groups: ['ops'] },
  ],
  // No default group: a request from any other agent has no route.
  defaultGroup: undefined,
});

let service: RunningApprovalService;
let queues: AgentSideQueues;
let redis: Redis;
let internalQueues: { notifications: Queue };
const slack = new FakeSlackApi();
const smtp = new SmtpCapture();

let env: Record<string, string>;

beforeAll(async () => {
  const [slackUrl, smtpUrl] = await Promise.all([slack.start(), smtp.start()]);
  env = approvalServiceEnv(prefixes, APPROVALS, {
    DECISION_SIGNING_SECRET,
    SLACK_BOT_TOKEN,
    SLACK_SIGNING_SECRET,
    SLACK_API_URL: slackUrl,
    SMTP_URL: smtpUrl,
    NOTIFY_ATTEMPTS: '20',
    NOTIFY_BACKOFF: '50ms',
    DECISION_ATTEMPTS: '7',
    DECISION_BACKOFF: '250ms',
    // Sweep often, and take over an unpublished decision or a dead sweep's timers after 2 s, not 30.
    TIMER_SWEEP_MS: '50',
    TIMER_LEASE_MS: '2000',
  });
  service = await startApprovalService(env, { port: 0, host: '127.0.0.1' });
  queues = new AgentSideQueues(prefixes);
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const internal = (name: string) => new Queue(name, { connection: redis, prefix: prefixes.queuePrefix });
  internalQueues = { notifications: internal(ApprovalServiceQueueName.Notifications) };
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await Promise.all(Object.values(internalQueues ?? {}).map((q) => q.close()));
  await redis?.quit();
  await Promise.all([slack.stop(), smtp.stop()]);
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

/** A click on a button of the request's Slack message: its value names the request and attempt. */
function slackBody(requestId: string, userId: string, action: 'approve' | 'deny', attempt = 0): string {
  const payload = {
    type: 'block_actions',
    user: { id: userId },
    channel: { id: 'C-ops' },
    actions: [{ action_id: `countersign_${action}`, value: `${requestId}|${attempt}` }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

async function postSlack(
  body: string,
  options: { timestamp?: number; secret?: string; signature?: string } = {},
) {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature =
    options.signature ?? slackSignature(options.secret ?? SLACK_SIGNING_SECRET, timestamp, body);
  const res = await fetch(`${service.url}/slack/interactions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': signature,
    },
    body,
  });
  return {
    status: res.status,
    json: (await res.json()) as { ok?: boolean; error?: string; message?: string },
  };
}

/** As an approver or a default test principal (auditor, scraper, …), each with its test token, or as no one. */
async function api(method: string, path: string, as: string | undefined, body?: unknown) {
  const credential = as ? asApprover(as) : {};
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...credential, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const decide = (callId: string, as: string, decision: 'approve' | 'deny', reason?: string) =>
  api('POST', `/approvals/${callId}/decisions`, as, { decision, ...(reason ? { reason } : {}) });

async function audit(
  callId: string,
): Promise<{ type: string; actor?: string; detail: Record<string, unknown> }[]> {
  return (await api('GET', `/audit?callId=${callId}`, 'bob')).json;
}

async function rejectionsFor(callId: string): Promise<string[]> {
  return (await audit(callId))
    .filter((e) => e.type === 'decision.rejected')
    .map((e) => String(e.detail.reason));
}

const posted = (callId: string) =>
  waitFor(() => slack.find('chat.postMessage', callId)[0], `Slack message for ${callId}`);

async function submitAndShow(over: Partial<ApprovalRequest> = {}) {
  const request = await queues.submit(approvalRequest(over));
  await waitFor(
    async () => (await api('GET', `/approvals/${request.callId}`, 'bob')).status === 200,
    'request stored',
  );
  return request;
}

const store = () => service.app.get(RequestStore);
const dueTimers = () => service.app.get(DueTimers);
const expireTimer = (requestId: string, attempt = 0) => ({ kind: 'expire' as const, requestId, attempt });

async function noTimersLeft(requestId: string, attempt = 0): Promise<boolean> {
  const [expire, escalate] = await Promise.all([
    dueTimers().dueAt(expireTimer(requestId, attempt)),
    dueTimers().dueAt({ kind: 'escalate', requestId, attempt }),
  ]);
  return expire === undefined && escalate === undefined;
}

function linkIn(mailText: string): string {
  const match = /https?:\/\/[^\s"<>]+\/approve\/[A-Za-z0-9_.-]+/.exec(mailText);
  if (!match) throw new Error('no approve link in the mail');
  return match[0];
}

// ---- tests ---------------------------------------------------------------------------------------------

describe('approval service', () => {
  it('posts a request to Slack with buttons and emails every approver of the group', async () => {
    const request = await queues.submit(approvalRequest({ args: { service: 'web', note: '<b>hi</b>' } }));
    const message = await posted(request.callId);

    expect(message.authorization).toBe(`Bearer ${SLACK_BOT_TOKEN}`);
    expect(message.body.channel).toBe('#ops');
    const actions = (
      message.body.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]
    ).find((b) => b.type === 'actions');
    expect(actions?.elements?.map((e) => [e.action_id, e.value])).toEqual([
      ['countersign_approve', `${request.requestId}|0`],
      ['countersign_deny', `${request.requestId}|0`],
      ['countersign_respond', `${request.requestId}|0`], // opens a modal asking for the text
      ['countersign_open_inbox', undefined], // a link to the inbox (edit form), not a decision
    ]);
    expect(JSON.stringify(message.body.blocks)).toContain('&lt;b&gt;hi&lt;/b&gt;');

    for (const who of ['bob', 'carol', 'dave']) {
      const mail = await waitFor(
        () => smtp.to(`${who}@example.test`, '&lt;b&gt;hi&lt;/b&gt;')[0],
        `mail to ${who}`,
      );
      expect(linkIn(mail.text)).toContain('/approve/');
    }
    expect(smtp.to('eve@example.test')).toEqual([]);
    await waitFor(
      async () => (await audit(request.callId)).filter((e) => e.type === 'notification.sent').length === 4,
      'notifications audited',
    );
  });

  it('approves through a signed Slack interaction and publishes a signed decision with the fingerprint of what was shown', async () => {
    const request = await queues.submit(approvalRequest({ args: { service: 'web', replicas: 3 } }));
    await posted(request.callId);
    const message = slack.replyTo(request.callId)!;

    const reply = await postSlack(slackBody(request.requestId, 'U_BOB', 'approve'));
    expect(reply).toEqual({ status: 200, json: { ok: true, status: 'decided' } });

    const decision = await queues.waitForDecision(request.callId);
    expect(SignedDecisionSchema.parse(decision)).toMatchObject({
      callId: request.callId,
      runId: request.runId,
      decision: 'approve',
      decidedBy: 'person',
      approvers: ['bob'],
      fingerprint: fingerprint('restart_service', { replicas: 3, service: 'web' }),
      shown: { toolName: 'restart_service', args: { service: 'web', replicas: 3 } },
      attempt: 0,
    });
    expect(verifyPayloadSignature(decision, DECISION_SIGNING_SECRET)).toBe(true);
    expect(verifyPayloadSignature({ ...decision, decision: 'deny' }, DECISION_SIGNING_SECRET)).toBe(false);
    // The workers' retries of the decision job, as configured (DECISION_ATTEMPTS, DECISION_BACKOFF).
    expect((await queues.decisions.getJob(jobIds.decision(request.requestId)))?.opts).toMatchObject({
      attempts: 7,
      backoff: { type: 'exponential', delay: 250 },
    });

    const update = await waitFor(
      () => slack.find('chat.update', 'Approved by bob').find((c) => c.body.ts === message.ts),
      'Slack message updated',
    );
    expect(update.body.channel).toBe('C-ops');
    expect(JSON.stringify(update.body.blocks)).not.toContain('countersign_approve');
  });

  describe('refuses and audits', () => {
    let request: ApprovalRequest;
    beforeAll(async () => {
      request = await submitAndShow({ requester: 'carol' });
    });

    it.each([
      [
        'a bad signature',
        () => postSlack(slackBody(request.requestId, 'U_BOB', 'approve'), { secret: 'not-the-secret' }),
        401,
        'bad_signature',
      ],
      [
        'a stale timestamp',
        () =>
          postSlack(slackBody(request.requestId, 'U_BOB', 'approve'), {
            timestamp: Math.floor(Date.now() / 1000) - 301,
          }),
        401,
        'stale_timestamp',
      ],
    ])(
      'a Slack request with %s (unauthenticated: counted, not audited)',
      async (_what, send, status, reason) => {
        const before = { counted: await unauthenticatedCount(reason), audited: await rejectionCount(reason) };
        expect((await send()).status).toBe(status);
        expect(await unauthenticatedCount(reason)).toBe(before.counted + 1);
        expect(await rejectionCount(reason)).toBe(before.audited);
      },
    );

    it.each([
      ['an unknown Slack user', 'U_MALLORY', 'unknown_slack_user', 'unknown Slack user'],
      ['the requester themself', 'U_CAROL', 'self_approval', 'you cannot decide on your own request'],
      [
        'an approver outside the routed groups',
        'U_EVE',
        'unauthorized_approver',
        'you are not an approver for this request',
      ],
    ])('a click by %s', async (_who, userId, reason, error) => {
      const reply = await postSlack(slackBody(request.requestId, userId, 'approve'));
      expect(reply).toEqual({ status: 200, json: { ok: false, error } });
      expect(await rejectionsFor(request.callId)).toContain(reason);
    });

    it('a replayed Slack request', async () => {
      const body = slackBody(request.requestId, 'U_REPLAYER', 'deny');
      const timestamp = Math.floor(Date.now() / 1000);
      expect((await postSlack(body, { timestamp })).status).toBe(200);
      const replays = await unauthenticatedCount('replay');
      expect((await postSlack(body, { timestamp })).status).toBe(401);
      expect(await unauthenticatedCount('replay')).toBe(replays + 1);
      expect(await rejectionCount('replay')).toBe(0);
    });

    it('the requester deciding through the API, and a non-member', async () => {
      expect(await decide(request.callId, 'carol', 'approve')).toMatchObject({
        status: 403,
        json: { error: 'self_approval' },
      });
      // Not routed to eve: the same answer as an unknown request (issue 24, finding 8b).
      expect(await decide(request.callId, 'eve', 'approve')).toMatchObject({
        status: 404,
        json: { error: 'unknown_call', message: `no approval request ${request.callId}` },
      });
      expect(await queues.decision(request.callId)).toBeUndefined();
      expect((await api('GET', `/approvals/${request.callId}`, 'bob')).json.status).toBe('pending');
    });

    it('calls without a valid approver token', async () => {
      expect(
        (await api('POST', `/approvals/${request.callId}/decisions`, undefined, { decision: 'approve' }))
          .status,
      ).toBe(401);
      const forged = await fetch(`${service.url}/approvals`, {
        headers: { Authorization: `Bearer ${testToken('bob')}0` },
      });
      expect(forged.status).toBe(401);
    });
  });

  it('decides nothing on the email link GET, decides once on POST, and refuses a second POST', async () => {
    const request = await queues.submit(approvalRequest({ args: { service: 'search' } }));
    const mail = await waitFor(() => smtp.to('dave@example.test', '"service": "search"')[0], 'mail to dave');
    const link = linkIn(mail.text);

    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('restart_service');
    expect(html).toContain('method="post"');
    expect((await api('GET', `/approvals/${request.callId}`, 'bob')).json.status).toBe('pending');

    const post = (decision: string) =>
      fetch(link, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `decision=${decision}&reason=looks+fine`,
      });
    expect((await post('approve')).status).toBe(200);
    const second = await post('deny');
    expect(second.status).toBe(409);
    expect(await second.text()).toContain('already been used');

    const decision = await queues.waitForDecision(request.callId);
    expect(decision).toMatchObject({ decision: 'approve', approvers: ['dave'], reason: 'looks fine' });
    expect(await rejectionsFor(request.callId)).toContain('replayed_token');
  });

  it('needs two different approvers for a quorum of 2; the same approver twice does not count', async () => {
    const request = await submitAndShow({ args: { service: 'payments-api' } });

    expect(await decide(request.callId, 'bob', 'approve')).toMatchObject({
      status: 202,
      json: { status: 'vote_recorded', approvals: 1, quorum: 2 },
    });
    expect(await decide(request.callId, 'bob', 'approve')).toMatchObject({
      status: 409,
      json: { error: 'already_voted' },
    });
    expect(await queues.decision(request.callId)).toBeUndefined();

    expect(await decide(request.callId, 'carol', 'approve')).toMatchObject({
      status: 200,
      json: { status: 'decided', decision: 'approve', approvers: ['bob', 'carol'] },
    });
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'approve',
      approvers: ['bob', 'carol'],
    });
  });

  it('lets a single deny decide at once, even under a quorum', async () => {
    const request = await submitAndShow({ args: { service: 'payments-db' } });
    expect((await decide(request.callId, 'bob', 'approve')).status).toBe(202);
    expect(await decide(request.callId, 'dave', 'deny', 'not during the freeze')).toMatchObject({
      status: 200,
      json: { decision: 'deny', approvers: ['dave'] },
    });
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'deny',
      decidedBy: 'person',
      reason: 'not during the freeze',
      approvers: ['dave'],
    });
    expect(await decide(request.callId, 'carol', 'approve')).toMatchObject({
      status: 409,
      json: { message: 'already decided by dave' },
    });
  });

  it('denies an expired request with reason "expired" and says so in Slack and by email', async () => {
    const request = await queues.submit(approvalRequest({ toolName: 'short_lived', args: { ttl: 1 } }));
    await posted(request.callId);
    const decision = await queues.waitForDecision(request.callId);
    expect(decision).toMatchObject({
      decision: 'deny',
      decidedBy: 'expired',
      reason: 'expired',
      approvers: [],
    });
    expect(verifyPayloadSignature(decision, DECISION_SIGNING_SECRET)).toBe(true);
    expect((await api('GET', `/approvals/${request.callId}`, 'bob')).json).toMatchObject({
      status: 'expired',
      outcome: { decidedBy: 'expired' },
    });
    await waitFor(() => slack.find('chat.update', 'expired').length > 0, 'Slack message shows the expiry');
    await waitFor(() => smtp.to('bob@example.test', 'Expired: short_lived').length > 0, 'expiry email');
    expect(await decide(request.callId, 'bob', 'approve')).toMatchObject({
      status: 409,
      json: { message: 'already decided: the request expired' },
    });
  });

  it('removes the timers of a decided request once it is published, and queues an outcome notice only where a channel shows the request', async () => {
    const inboxOnly = await queues.submit(approvalRequest({ toolName: 'inbox_only', args: { n: 1 } }));
    const onSlack = await queues.submit(
      approvalRequest({ args: { service: 'search', ticket: 'FOLLOW-UP-2' } }),
    );
    await posted(onSlack.callId);
    await waitFor(
      async () => (await decide(inboxOnly.callId, 'bob', 'approve')).status === 200,
      'inbox-only decided',
    );
    expect(await decide(onSlack.callId, 'bob', 'approve')).toMatchObject({ status: 200 });
    await Promise.all([queues.waitForDecision(inboxOnly.callId), queues.waitForDecision(onSlack.callId)]);

    const outcomeNotice = (r: ApprovalRequest) =>
      internalQueues.notifications.getJob(approvalServiceJobIds.showOutcome(r.requestId, 0));
    // The timers go last, with the mark that the decision is published, once the outcome notice (if any) is queued.
    await waitFor(
      async () => (await noTimersLeft(inboxOnly.requestId)) && (await noTimersLeft(onSlack.requestId)),
      'timers removed',
    );
    expect((await store().get(onSlack.requestId))?.published).toBe(true);
    expect(await outcomeNotice(inboxOnly)).toBeUndefined();
    expect(await outcomeNotice(onSlack)).toBeDefined();
    await waitFor(
      () => slack.find('chat.update', 'FOLLOW-UP-2').length > 0,
      'Slack message shows the outcome',
    );
    expect(await decide(inboxOnly.callId, 'carol', 'deny')).toMatchObject({ status: 409 });
  });

  describe('timers', () => {
    const auditOf = async (callId: string, type: string) =>
      (await audit(callId)).filter((e) => e.type === type);

    it('trims calls settled longer ago than the retention from the decided and expired sets, and nothing newer', async () => {
      const sut = new RequestStore(redis, approvalKeys(`${prefixes.keyPrefix}-trim`), 10_000, 2_000);
      const [keys] = sut.keys.shards;
      await redis.zadd(keys.decided, 1_000, 'old-decided', 95_000, 'new-decided');
      await redis.zadd(keys.expired, 2_000, 'old-expired', 99_000, 'new-expired');
      await redis.zadd(keys.pending, 1_000, 'old-pending');
      expect(await sut.trimSettled(100_000)).toBe(2);
      expect(await redis.zrange(keys.decided, 0, -1)).toEqual(['new-decided']);
      expect(await redis.zrange(keys.expired, 0, -1)).toEqual(['new-expired']);
      expect(await redis.zrange(keys.pending, 0, -1)).toEqual(['old-pending']); // pending is never trimmed
    });

    it('claims only due timers, each for one sweep at a time, and removes only those still under its claim', async () => {
      // A timer set of its own (another key prefix), so the service's sweep does not take part.
      const sut = new DueTimers(redis, approvalKeys(`${prefixes.keyPrefix}-repository`));
      const [shard] = sut.keys.shards;
      const { timers } = shard;
      const member = (callId: string) => `expire|${callId}|0`;
      await redis.zadd(
        timers,
        1_000,
        member('a'),
        2_000,
        member('b'),
        3_000,
        member('c'),
        9_000,
        member('later'),
      );

      const first = await sut.claim(shard, 3_000, 500, 2);
      expect(first).toEqual({
        shard: 0,
        claimedScore: 3_500,
        timers: [
          { member: member('a'), timer: { kind: 'expire', requestId: 'a', attempt: 0 } },
          { member: member('b'), timer: { kind: 'expire', requestId: 'b', attempt: 0 } },
        ],
      });
      // Under the lease, another sweep gets only what is left.
      expect((await sut.claim(shard, 3_000, 500, 100)).timers.map((t) => t.member)).toEqual([member('c')]);
      expect((await sut.claim(shard, 3_499, 500, 100)).timers).toEqual([]);

      // 'b' was moved since the claim (e.g. a decision made it the publish check): it is not the claimer's to remove.
      await redis.zadd(timers, 7_000, member('b'));
      expect(await sut.finish(first, first.timers)).toBe(1);
      expect(await redis.zrange(timers, 0, -1)).toEqual([member('c'), member('b'), member('later')]);

      // A claim that was never finished is due again when its lease runs out.
      expect((await sut.claim(shard, 3_500, 500, 100)).timers.map((t) => t.member)).toEqual([member('c')]);
    });

    it('publishes, from the sweep, a decision that was recorded but never published (its decider died)', async () => {
      const request = await submitAndShow({ args: { service: 'orphaned-decision' } });
      // The vote settles the request in Redis; nothing publishes it, as if the replica died right after.
      const voted = await service.app.get(VoteStore).recordVote({
        requestId: request.requestId,
        approver: 'carol',
        decision: 'approve',
        channel: 'api',
        checked: { rev: 0, routeVersion: 0 },
        counts: true,
      });
      expect(voted.status).toBe('decided');
      expect(await queues.decision(request.callId)).toBeUndefined();
      expect(await dueTimers().dueAt(expireTimer(request.requestId))).toBeDefined();

      // Once the lease runs out, a sweep publishes the recorded decision, and then nothing is left to check.
      const decision = await queues.waitForDecision(request.callId);
      expect(decision).toMatchObject({ decision: 'approve', decidedBy: 'person', approvers: ['carol'] });
      expect(verifyPayloadSignature(decision, DECISION_SIGNING_SECRET)).toBe(true);
      await waitFor(() => noTimersLeft(request.requestId), 'publish check removed');
      expect((await store().get(request.requestId))?.published).toBe(true);
      expect(await auditOf(request.callId, 'decision.published')).toHaveLength(1);
    });

    it('expires each request exactly once with two replicas sweeping', async () => {
      const replica = await startApprovalService(env, { port: 0, host: '127.0.0.1' });
      try {
        const requests = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            queues.submit(approvalRequest({ toolName: 'short_lived', args: { replica: i } })),
          ),
        );
        const decisions = await Promise.all(requests.map((r) => queues.waitForDecision(r.callId)));
        expect(decisions.every((d) => d.decidedBy === 'expired' && d.reason === 'expired')).toBe(true);
        for (const { callId, requestId } of requests) {
          await waitFor(() => noTimersLeft(requestId), `timers of ${callId} removed`);
          expect(await auditOf(callId, 'decision.recorded')).toEqual([
            expect.objectContaining({
              actor: 'expiry',
              detail: { decision: 'deny', decidedBy: 'expired', requestId },
            }),
          ]);
        }
        const jobs = await queues.decisions.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
        for (const { callId } of requests)
          expect(jobs.filter((j) => (j.data as { callId: string }).callId === callId)).toHaveLength(1);
      } finally {
        await replica.close();
      }
    });

    it('retries, once the lease runs out, a timer claimed by a sweep that never finished', async () => {
      const request = await queues.submit(approvalRequest({ toolName: 'longer_lived', args: { n: 1 } }));
      const dueAt = await waitFor(
        () => dueTimers().dueAt(expireTimer(request.requestId)),
        'expiry timer stored',
      );

      // Another replica claims the timer when it is due (4 s from now: no sweep of the service can have taken
      // it yet) and dies without finishing it.
      const shard = dueTimers().keys.shardOf(request.requestId);
      const claim = await dueTimers().claim(shard, dueAt, 1_000, 100);
      expect(claim.timers.map((t) => t.timer)).toContainEqual(expireTimer(request.requestId));
      expect(claim.claimedScore).toBe(dueAt + 1_000);
      expect(await dueTimers().dueAt(expireTimer(request.requestId))).toBe(claim.claimedScore);

      // The service's sweep takes it over when the lease runs out, not before, and expires the request once.
      const decision = await queues.waitForDecision(request.callId, 20_000);
      expect(decision).toMatchObject({ decision: 'deny', decidedBy: 'expired', reason: 'expired' });
      expect(Date.parse(decision.decidedAt)).toBeGreaterThanOrEqual(claim.claimedScore);
      await waitFor(() => noTimersLeft(request.requestId), 'timer removed');
      expect(await auditOf(request.callId, 'decision.recorded')).toHaveLength(1);
    });
  });

  it('denies a request that matches no route with reason "no approver route"', async () => {
    const request = await queues.submit(approvalRequest({ agent: 'stray' }));
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'deny',
      decidedBy: 'no_route',
      reason: 'no approver route',
      approvers: [],
    });
  });

  it('shows a manual_only request as a notice without buttons and publishes no decision', async () => {
    const request = await queues.submit(
      approvalRequest({
        toolName: 'drop_database',
        tier: 'manual_only',
        reason: 'manual_step',
        args: { name: 'prod' },
      }),
    );
    const message = await waitFor(() => slack.find('chat.postMessage', 'drop_database')[0], 'Slack notice');
    expect(message.body.text).toContain('Manual step required');
    expect((message.body.blocks as { type: string }[]).some((b) => b.type === 'actions')).toBe(false);
    await waitFor(
      () => smtp.to('bob@example.test', 'Manual step required: drop_database')[0],
      'notice email',
    );

    expect(await decide(request.callId, 'bob', 'approve')).toMatchObject({
      status: 409,
      json: { error: 'manual_step_notice' },
    });
    expect((await api('GET', `/approvals/${request.callId}`, 'bob')).json.status).toBe('notice');
    expect(await queues.decision(request.callId)).toBeUndefined();
  });

  it('lets the first decision win across channels: the inbox approves, Slack is updated, a late click is told who decided', async () => {
    const request = await queues.submit(approvalRequest({ args: { service: 'cache' } }));
    await posted(request.callId);

    const signIn = await signInToInbox(service.url, { token: testToken('bob') });
    expect(signIn.status).toBe(303);
    expect(signIn.setCookie).toMatch(/HttpOnly/i);
    expect(signIn.setCookie).toMatch(/SameSite=Strict/i);
    const session = signIn.session!;

    const decideByCookie = (headers: Record<string, string>) =>
      fetch(`${service.url}/approvals/${request.callId}/decisions`, {
        method: 'POST',
        headers: { Cookie: session, 'Content-Type': 'application/json', ...headers },
        body: '{"decision":"approve"}',
      });
    expect((await decideByCookie({})).status).toBe(401); // a cookie alone (e.g. a cross-site form) is not enough
    expect((await decideByCookie({ 'X-Countersign-Inbox': '1' })).status).toBe(200);

    await waitFor(
      () =>
        slack.find('chat.update', 'Approved by bob').some((c) => JSON.stringify(c.body).includes('cache')),
      'Slack shows the inbox decision',
    );
    const late = await postSlack(slackBody(request.requestId, 'U_CAROL', 'deny'));
    expect(late.json).toEqual({ ok: false, error: 'already decided by bob' });
    await waitFor(
      () => slack.find('chat.postEphemeral', 'already decided by bob').length > 0,
      'late clicker told',
    );
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'approve',
      approvers: ['bob'],
    });
  });

  it('suggests a standing rule after 5 consecutive approvals for the same requester, and makes none by itself', async () => {
    for (let i = 0; i < 5; i++) {
      const request = await submitAndShow({
        toolName: 'deploy_app',
        requester: 'trusty',
        args: { build: i },
      });
      expect((await api('GET', `/approvals/${request.callId}`, 'bob')).json.trustSuggestion).toBeUndefined();
      expect((await decide(request.callId, 'bob', 'approve')).status).toBe(200);
    }
    const sixth = await queues.submit(
      approvalRequest({ toolName: 'deploy_app', requester: 'trusty', args: { build: 6 } }),
    );
    const message = await posted(sixth.callId);
    const suggestion = '5 approvals in a row of deploy_app for trusty: consider a standing rule';
    expect(JSON.stringify(message.body.blocks)).toContain(suggestion);
    await waitFor(() => smtp.to('carol@example.test', suggestion)[0], 'suggestion in the email');
    const view = (await api('GET', `/approvals/${sixth.callId}`, 'bob')).json;
    expect(view).toMatchObject({ status: 'pending', trustSuggestion: expect.stringContaining(suggestion) });
  });

  it('keeps a request decidable while Slack is down, and delivers the message once Slack is back', async () => {
    slack.failing = true;
    const request = await submitAndShow({ args: { service: 'queue' } });
    await waitFor(
      () =>
        slack.calls.some((c) => c.method === 'chat.postMessage' && JSON.stringify(c.body).includes('queue')),
      'a failed attempt',
    );
    slack.failing = false;
    await waitFor(() => slack.replyTo(request.callId), 'delivered on retry');
    expect(slack.find('chat.postMessage', request.callId).length).toBeGreaterThanOrEqual(2);
    expect((await decide(request.callId, 'dave', 'approve')).status).toBe(200);
  });

  it('keeps an invalid queue message in the failed set with an error naming the fields, and keeps working', async () => {
    const bad = await queues.requests.add(
      'approval.request',
      { callId: 'bad-1', args: 'not-an-object', tier: 'sometimes' },
      { jobId: 'bad-1' },
    );
    const failed = await waitFor(
      async () =>
        (await queues.requests.getJob(bad.id!)) && (await bad.isFailed())
          ? queues.requests.getJob(bad.id!)
          : undefined,
      'bad job failed',
    );
    expect(failed.failedReason).toContain('runId');
    expect(failed.failedReason).toContain('args');
    expect(failed.failedReason).toContain('tier');
    expect(failed.attemptsMade).toBe(1);

    const forged = approvalRequest();
    await queues.submit({ ...forged, fingerprint: 'f'.repeat(64) });
    const rejected = await waitFor(
      async () => (await queues.requests.getJob(forged.requestId))?.failedReason,
      'forged fingerprint rejected',
    );
    expect(rejected).toContain('fingerprint');

    const good = await queues.submit(approvalRequest({ args: { service: 'after-the-bad-one' } }));
    await posted(good.callId);
  });

  it('answers 400 naming the fields when a body or query has the wrong types', async () => {
    const request = await submitAndShow({ args: { service: 'types' } });
    const res = await api('POST', `/approvals/${request.callId}/decisions`, 'bob', {
      decision: 5,
      reason: 7,
    });
    expect(res.status).toBe(400);
    expect(res.json.issues.map((i: { path: string }) => i.path).sort()).toEqual(['decision', 'reason']);
    expect(
      (
        await api('POST', `/approvals/${request.callId}/decisions`, 'bob', {
          decision: 'approve',
          extra: true,
        })
      ).status,
    ).toBe(400);
    const query = await api('GET', '/approvals?status=sometimes', 'bob');
    expect(query.status).toBe(400);
    expect(query.json.message).toContain('status');
    expect((await api('GET', '/audit?limit=lots', 'bob')).json.message).toContain('limit');
  });

  it('serves health, metrics and the OpenAPI document', async () => {
    const counts = {
      waiting: expect.any(Number),
      active: expect.any(Number),
      delayed: expect.any(Number),
      failed: expect.any(Number),
    };
    const health = (await api('GET', '/health', undefined)).json;
    expect(health).toMatchObject({
      status: 'ok',
      redis: 'up',
      queues: { 'approval-decisions': counts, 'approval-notifications': counts },
      timers: { scheduled: expect.any(Number), due: expect.any(Number) },
    });
    // No agent worker runs in this file: every decision published so far still waits.
    expect(health.queues['approval-decisions'].waiting).toBeGreaterThan(0);
    expect((await fetch(`${service.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${service.url}/metrics`, { headers: asApprover('bob') })).status).toBe(403);
    const metrics = await (await fetch(`${service.url}/metrics`, { headers: bearer('scraper') })).text();
    expect(metrics).toContain(
      'countersign_decisions_published_total{decision="approve",decided_by="person"}',
    );
    // Expiries run earlier in this file: each settled its request and kept its timer as the publish check.
    expect(metrics).toContain('countersign_approval_timers_total{kind="expire",result="kept"}');
    const doc = (await api('GET', '/docs-json', undefined)).json;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/approvals',
        '/approvals/{id}/decisions',
        '/approvals/{id}/done',
        '/standing-rules',
        '/slack/interactions',
        '/audit/verify',
      ]),
    );
  });

  // Last: it breaks this file's audit chain on purpose.
  it('keeps a hash-chained audit log that verifies, and detects a removed entry', async () => {
    expect((await api('GET', '/audit/verify', 'bob')).status).toBe(403);
    const before = (await api('GET', '/audit/verify', 'auditor')).json;
    expect(before).toMatchObject({ intact: true, entries: expect.any(Number) });
    expect(before.chains).toBeGreaterThanOrEqual(1); // one per service process that wrote
    const stream = `{${prefixes.keyPrefix}:audit}:stream`;
    const entries = await redis.xrange(stream, '-', '+');
    expect(entries.length).toBeGreaterThan(10);
    const chainOf = ([, fields]: [string, string[]]) => fields[fields.indexOf('chain') + 1];
    const [victimId] = entries[5];
    // The break shows at the next entry of the victim's chain (each writer keeps its own chain).
    const [nextId] = entries.slice(6).find((e) => chainOf(e) === chainOf(entries[5]))!;
    await redis.xdel(stream, victimId);
    const check = (await api('GET', '/audit/verify', 'auditor')).json;
    expect(check.intact).toBe(false);
    expect(check.brokenAt.id).toBe(nextId);
  });

  /** Refusals of `reason` in the whole audit log (as an audit reader sees it). */
  async function rejectionCount(reason: string): Promise<number> {
    const all: { type: string; detail: Record<string, unknown> }[] = (await api('GET', '/audit', 'auditor'))
      .json;
    return all.filter((e) => e.type === 'decision.rejected' && e.detail.reason === reason).length;
  }

  /** Slack requests refused for `reason` before they named anyone (the metric they are counted in). */
  async function unauthenticatedCount(reason: string): Promise<number> {
    const text = await (await fetch(`${service.url}/metrics`, { headers: bearer('scraper') })).text();
    const line = text
      .split('\n')
      .find((l) =>
        l.startsWith(`countersign_unauthenticated_requests_total{channel="slack",reason="${reason}"}`),
      );
    return line ? Number(line.split(' ').at(-1)) : 0;
  }
});

// Notifications survive retries without repeating themselves. A failure after a Slack post or an email (the
// audit, the record) makes BullMQ retry the job; the retry finishes the bookkeeping without posting or sending
// again. A try that lost Slack's or the mail server's answer leaves its delivery in doubt; the retry reports it
// instead of repeating it (at-most-once, see OnceOnlyDelivery). Real Redis, the Slack stand-in and a real SMTP
// server; each fault is injected once.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  ApprovalServiceQueueName,
  approvalServiceJobIds as jobIds,
  type ApprovalRequest,
} from '@countersign/contracts';
import type { AuditInput } from '@countersign/audit';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { SlackReplays } from '../../apps/approval-service/src/channels/slack/slack-replays';
import { approvalKeys } from '../../apps/approval-service/src/core/approval-keys';
import { AuditTrail } from '../../apps/approval-service/src/core/audit-trail';
import {
  DeliveryLedger,
  type ClaimedDelivery,
} from '../../apps/approval-service/src/notifications/delivery-ledger';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { VotesService } from '../../apps/approval-service/src/votes/votes.service';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { FakeSlackApi } from '../support/fake-slack-api';
import { FaultySmtp } from '../support/faulty-smtp';
import { approvalsConfig, group } from '../support/fixtures';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('notify-once');
const APPROVALS = approvalsConfig({
  groups: [group('ops', ['bob', 'carol'], '#ops')],
  // Every request here matches a rule.
  defaultGroup: undefined,
  rules: [
    { name: 'slack', match: { tool: 'slack_*' }, groups: ['ops'], channels: ['slack'] },
    { name: 'email', match: { tool: 'email_*' }, groups: ['ops'], channels: ['email'] },
    // Long enough that the request emails (and their retries) go out first, even on a busy machine.
    {
      name: 'expiring',
      match: { tool: 'expiring_*' },
      groups: ['ops'],
      channels: ['email'],
      expiresIn: '3s',
    },
  ],
});

let service: RunningApprovalService;
let queues: AgentSideQueues;
let notifications: Queue;
const slack = new FakeSlackApi();
const smtp = new FaultySmtp();

beforeAll(async () => {
  const [slackUrl, smtpUrl] = await Promise.all([slack.start(), smtp.start()]);
  service = await startApprovalService(
    approvalServiceEnv(prefixes, APPROVALS, {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: 'slack-signing-secret-for-tests',
      SLACK_API_URL: slackUrl,
      SMTP_URL: smtpUrl,
      NOTIFY_BACKOFF: '50ms',
      TIMER_SWEEP_MS: '50',
    }),
    { port: 0, host: '127.0.0.1' },
  );
  queues = new AgentSideQueues(prefixes);
  notifications = new Queue(ApprovalServiceQueueName.Notifications, {
    connection: queues.connection,
    prefix: prefixes.queuePrefix,
  });
});

afterEach(async () => {
  jest.restoreAllMocks();
  slack.hangUpOn = undefined;
  // Every notification job has run: only then is "sent once" a fact, and nothing spills into the next test.
  await waitFor(async () => {
    const counts = await notifications.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  }, 'notification queue drained');
});

afterAll(async () => {
  await service?.close();
  await notifications?.close();
  await queues?.close();
  await Promise.all([slack.stop(), smtp.stop()]);
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

const store = () => service.app.get(RequestStore);

async function audited(callId: string, type: string) {
  return (await service.app.get(AuditTrail).log.read({ callId })).filter((e) => e.type === type);
}

/** The next audit append that `picks` rejects without appending (as a Redis error would); the rest append. */
function failAuditOnce(picks: (entry: AuditInput) => boolean): { fired: () => boolean } {
  const trail = service.app.get(AuditTrail);
  const append = trail.append.bind(trail);
  let fired = false;
  jest.spyOn(trail, 'append').mockImplementation((entry) => {
    if (fired || !picks(entry)) return append(entry);
    fired = true;
    return Promise.reject(new Error('injected: audit append failed'));
  });
  return { fired: () => fired };
}

/** The next delivery record that `picks` rejects without writing; the rest are written. */
function failRecordOnce(picks: (claim: ClaimedDelivery) => boolean) {
  const ledger = service.app.get(DeliveryLedger);
  const record = ledger.record.bind(ledger);
  let fired = false;
  jest.spyOn(ledger, 'record').mockImplementation((claim, what) => {
    if (fired || !picks(claim)) return record(claim, what);
    fired = true;
    return Promise.reject(new Error('injected: recording the delivery failed'));
  });
  return { fired: () => fired };
}

/** Waits until the job ran to completion; returns how many times it was tried. */
async function completed(jobId: string): Promise<number> {
  await waitFor(async () => (await notifications.getJobState(jobId)) === 'completed', `${jobId} completed`);
  return (await notifications.getJob(jobId))!.attemptsMade;
}

/** Decided in process: how an approver gets in is not what these tests are about. */
const approve = (requestId: string, approver: string) =>
  service.app.get(VotesService).vote({
    requestId,
    approver,
    approverGroups: ['ops'],
    decision: 'approve',
    channel: 'api',
  });

const request = (toolName: string, ticket: string): ApprovalRequest =>
  approvalRequest({ toolName, args: { ticket } });

// ---- tests ---------------------------------------------------------------------------------------------

describe('a retry after the post or the email', () => {
  it('posts to Slack once when the audit after the post fails, and the retry still audits it and updates it with the outcome', async () => {
    const r = request('slack_audit', 'ONCE-1');
    const fault = failAuditOnce((e) => e.type === 'notification.sent' && e.callId === r.callId);
    await queues.submit(r);

    expect(await completed(jobIds.notifySlack(r.requestId, 0, '#ops'))).toBe(2);
    expect(fault.fired()).toBe(true);
    expect(slack.find('chat.postMessage', r.callId)).toHaveLength(1);
    expect(await audited(r.callId, 'notification.sent')).toHaveLength(1);
    const message = slack.replyTo(r.callId)!;
    expect((await store().get(r.requestId))?.slackMessages).toEqual([message]);

    await approve(r.requestId, 'bob');
    await waitFor(
      () => slack.find('chat.update', 'Approved by bob').find((c) => c.body.ts === message.ts),
      'the posted message shows the outcome',
    );
  });

  it('posts to Slack once when recording the post fails once, and still remembers the message', async () => {
    const r = request('slack_record', 'ONCE-2');
    const fault = failRecordOnce((claim) => claim.ref.requestId === r.requestId);
    await queues.submit(r);

    await completed(jobIds.notifySlack(r.requestId, 0, '#ops'));
    expect(fault.fired()).toBe(true);
    expect(slack.find('chat.postMessage', r.callId)).toHaveLength(1);
    expect((await store().get(r.requestId))?.slackMessages).toEqual([slack.replyTo(r.callId)]);
    expect(await audited(r.callId, 'notification.sent')).toHaveLength(1);
  });

  it('emails a request once when the audit after the send fails, and records the approver so the expiry reaches them', async () => {
    const r = request('expiring_audit', 'ONCE-3');
    const fault = failAuditOnce(
      (e) => e.type === 'notification.sent' && e.callId === r.callId && e.detail?.target === 'bob',
    );
    await queues.submit(r);

    expect(await completed(jobIds.notifyEmail(r.requestId, 0, 'bob'))).toBe(2);
    expect(fault.fired()).toBe(true);
    expect(smtp.to('bob@example.test', '"ticket": "ONCE-3"')).toHaveLength(1);
    expect((await audited(r.callId, 'notification.sent')).map((e) => e.detail.target).sort()).toEqual([
      'bob',
      'carol',
    ]);
    expect((await store().get(r.requestId))?.emailed.sort()).toEqual(['bob', 'carol']);

    expect(await queues.waitForDecision(r.callId)).toMatchObject({ decidedBy: 'expired' });
    await completed(jobIds.showOutcome(r.requestId, 0));
    expect(smtp.to('bob@example.test', 'Expired: expiring_audit')).toHaveLength(1);
    expect(smtp.to('carol@example.test', 'Expired: expiring_audit')).toHaveLength(1);
  });

  it('emails each expiry once when one of them is refused and the outcome job is retried', async () => {
    const r = request('expiring_refused', 'ONCE-4');
    await queues.submit(r);
    await Promise.all(['bob', 'carol'].map((id) => completed(jobIds.notifyEmail(r.requestId, 0, id))));
    // The expiry mails go out in this order: refuse the second, after the first was sent.
    const [first, second] = (await store().get(r.requestId))!.emailed;
    smtp.failNext(
      'refuse',
      (mail) => mail.to.includes(`${second}@example.test`) && mail.text.includes('Expired: expiring_refused'),
    );

    expect(await queues.waitForDecision(r.callId)).toMatchObject({ decidedBy: 'expired' });
    expect(await completed(jobIds.showOutcome(r.requestId, 0))).toBe(2);
    expect(smtp.to(`${first}@example.test`, 'Expired: expiring_refused')).toHaveLength(1);
    expect(smtp.to(`${second}@example.test`, 'Expired: expiring_refused')).toHaveLength(1);
  });
});

describe('a try that lost the answer', () => {
  it('does not post to Slack again when the connection dropped after Slack received the post, and reports it in doubt', async () => {
    const r = request('slack_hang_up', 'ONCE-5');
    let hungUp = false;
    slack.hangUpOn = (call) =>
      !hungUp && call.method === 'chat.postMessage' && JSON.stringify(call.body).includes(r.callId)
        ? (hungUp = true)
        : false;
    await queues.submit(r);

    await waitFor(async () => (await audited(r.callId, 'notification.failed'))[0], 'reported in doubt');
    expect(await completed(jobIds.notifySlack(r.requestId, 0, '#ops'))).toBe(2);
    expect(hungUp).toBe(true);
    expect(slack.find('chat.postMessage', r.callId)).toHaveLength(1);
    expect((await audited(r.callId, 'notification.failed'))[0].detail).toMatchObject({
      channel: 'slack',
      target: '#ops',
      error: expect.stringContaining('in doubt'),
    });
    expect(await audited(r.callId, 'notification.sent')).toEqual([]);
  });

  it('does not email a request again when the connection dropped after the server received it, and still tells of an expiry', async () => {
    const r = request('expiring_hang_up', 'ONCE-6');
    smtp.failNext('hang-up', (mail) => mail.to.includes('bob@example.test') && mail.text.includes('ONCE-6'));
    await queues.submit(r);

    await waitFor(async () => (await audited(r.callId, 'notification.failed'))[0], 'reported in doubt');
    expect(await completed(jobIds.notifyEmail(r.requestId, 0, 'bob'))).toBe(2);
    expect(smtp.to('bob@example.test', '"ticket": "ONCE-6"')).toHaveLength(1);
    expect((await audited(r.callId, 'notification.failed'))[0].detail).toMatchObject({
      channel: 'email',
      target: 'bob',
      error: expect.stringContaining('in doubt'),
    });
    // bob may have the request, so an expiry is emailed to him too.
    await queues.waitForDecision(r.callId);
    await completed(jobIds.showOutcome(r.requestId, 0));
    expect(smtp.to('bob@example.test', 'Expired: expiring_hang_up')).toHaveLength(1);
    expect(smtp.to('carol@example.test', 'Expired: expiring_hang_up')).toHaveLength(1);
  });
});

describe('the delivery ledger', () => {
  const redis = new Redis(TEST_REDIS_URL);
  // Keys of its own (still under the file's prefix, so they are cleaned up): the service's sweep never sees them.
  const keys = approvalKeys(`${prefixes.keyPrefix}-store`);
  const requests = new RequestStore(redis, keys, 60_000, 60_000);
  const sut = new DeliveryLedger(redis, keys);
  afterAll(() => redis.quit());

  async function stored(status: 'pending' | 'decided' = 'pending'): Promise<ApprovalRequest> {
    const r = approvalRequest();
    const now = Date.now();
    await requests.create({
      request: r,
      status,
      groups: ['ops'],
      quorum: 1,
      channels: ['email'],
      now,
      expiresAt: now + 60_000,
      refusal: status === 'decided' ? { decidedBy: 'policy', reason: 'no route', at: '' } : undefined,
    });
    return r;
  }

  it('reserves a delivery once, gives its record back to a retry, and keeps an unrecorded reservation in doubt', async () => {
    const { requestId } = await stored();
    const ref = { requestId, attempt: 0, key: 'email:bob' };
    const claim = await sut.claim(ref, ['pending'], 1_000);
    expect(claim).toMatchObject({ status: 'claimed' });
    expect(await sut.claim(ref, ['pending'])).toEqual({ status: 'in_doubt', reservedAt: 1_000 });

    expect(
      await sut.record(claim as ClaimedDelivery, {
        receipt: 'r1',
        emailed: 'bob',
      }),
    ).toBe(true);
    expect(await sut.claim(ref, ['pending'])).toEqual({ status: 'delivered', receipt: 'r1' });
    expect((await requests.get(requestId))?.emailed).toEqual(['bob']);
  });

  it('releases only its own reservation, after which the delivery may be claimed again', async () => {
    const { requestId } = await stored();
    const ref = { requestId, attempt: 0, key: 'slack:#ops' };
    const first = (await sut.claim(ref, ['pending'])) as ClaimedDelivery;
    await sut.release({ ...first, reservation: 'reserved:1:other' });
    expect(await sut.claim(ref, ['pending'])).toMatchObject({ status: 'in_doubt' });
    await sut.release(first);
    const second = await sut.claim(ref, ['pending']);
    expect(second).toMatchObject({ status: 'claimed' });
    // The first try's late record finds its reservation gone and writes nothing.
    expect(await sut.record(first, { receipt: 'C1 1.1', slackMessage: { channel: 'C1', ts: '1.1' } })).toBe(
      false,
    );
    expect((await requests.get(requestId))?.slackMessages).toEqual([]);
  });

  it('reserves nothing for another attempt, a missing request, or a request in none of the statuses', async () => {
    const pending = await stored();
    const decided = await stored('decided');
    expect(
      await sut.claim({ requestId: pending.requestId, attempt: 1, key: 'email:bob' }, ['pending']),
    ).toEqual({
      status: 'not_due',
    });
    expect(await sut.claim({ requestId: 'rq-missing', attempt: 0, key: 'email:bob' }, ['pending'])).toEqual({
      status: 'not_due',
    });
    expect(
      await sut.claim({ requestId: decided.requestId, attempt: 0, key: 'email:bob' }, ['pending', 'notice']),
    ).toEqual({ status: 'not_due' });
    expect(
      await sut.claim({ requestId: decided.requestId, attempt: 0, key: 'email:bob' }, ['decided']),
    ).toMatchObject({
      status: 'claimed',
    });
  });
});

describe('Slack replays', () => {
  const redis = new Redis(TEST_REDIS_URL);
  const keys = approvalKeys(`${prefixes.keyPrefix}-store`);
  const sut = new SlackReplays(redis, keys);
  afterAll(() => redis.quit());

  it('remembers a Slack signature once', async () => {
    const signature = `v0=${'ab'.repeat(32)}`;
    expect(await sut.firstSeen(signature, 60)).toBe(true);
    expect(await sut.firstSeen(signature, 60)).toBe(false);
    expect(await redis.ttl(keys.seenSlackSignature(signature))).toBeGreaterThan(50);
  });
});

// The notification digest (issue 11, finding 6): past NOTIFY_DIGEST_AFTER requests of one requester in a window,
// further requests are not posted or emailed one by one; each Slack channel and approver gets one digest when the
// window ends. First the store's rules on the real Redis with explicit times, then the approval service with the
// Slack stand-in and a real SMTP server.
import { Redis } from 'ioredis';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { approvalKeys } from '../../apps/approval-service/src/core/approval-keys';
import { DigestStore, type DigestTarget } from '../../apps/approval-service/src/notifications/digest-store';
import { NotificationService } from '../../apps/approval-service/src/notifications/notification.service';
import { RequestIntake } from '../../apps/approval-service/src/requests/intake/request-intake';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { approvalsConfig, asApprover, group } from '../support/fixtures';
import { FakeSlackApi } from '../support/fake-slack-api';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';
import { SmtpCapture } from '../support/smtp-capture';
import { linkCallId, linkIn } from '../support/system';

jest.setTimeout(60_000);

describe('DigestStore', () => {
  const prefixes = uniquePrefixes('digest-store');
  const keys = approvalKeys(prefixes.keyPrefix);
  const redis = new Redis(TEST_REDIS_URL);
  const WINDOW = 60_000;
  const T0 = 1_700_000_040_000; // a window start (a multiple of WINDOW)
  const sut = new DigestStore(redis, keys, WINDOW, 2);
  const targets: DigestTarget[] = ['slack:#ops', 'email:bob'];
  let n = 0;

  afterAll(async () => {
    await deletePrefixedKeys(prefixes);
    await redis.quit();
  });

  /** A stored call attempt (all admission reads of it is its attempt). */
  async function call(attempt = 0): Promise<string> {
    const callId = `call-${++n}`;
    await redis.hset(keys.request(callId), 'attempt', String(attempt));
    return callId;
  }
  const admit = (
    callId: string,
    requester: string,
    now: number,
    phase: 'request' | 'escalation' = 'request',
  ) => sut.admit({ requestId: callId, attempt: 0, requester, phase, targets }, now);

  it('notifies the first requests of a requester in a window one by one and holds the rest for the digest', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await admit(await call(), 'alice', T0 + i * 1_000));
    expect(answers.map((a) => a.kind)).toEqual(['direct', 'direct', 'digest', 'digest']);
    expect(answers[2]).toEqual({ kind: 'digest', windowStart: T0 });
    // Another requester in the same window, and alice in the next one, start from zero.
    expect((await admit(await call(), 'bob', T0 + 5_000)).kind).toBe('direct');
    expect((await admit(await call(), 'alice', T0 + WINDOW)).kind).toBe('direct');
  });

  it('answers a redelivered request as the first time and counts it once', async () => {
    const ids = [await call(), await call(), await call()];
    const first = [];
    for (const id of ids) first.push(await admit(id, 'carol', T0 + 1_000));
    // Redelivered later, even in another window: the same answers, the window of the first count.
    const again = [];
    for (const id of ids) again.push(await admit(id, 'carol', T0 + WINDOW + 5_000));
    expect(again).toEqual(first);
    expect(first[2]).toEqual({ kind: 'digest', windowStart: T0 });
    expect(await redis.hget(keys.digestWindow('carol', T0), 'n')).toBe('3');
    expect(await redis.hget(keys.digestWindow('carol', T0), 't:email:bob')).toBe('1');
  });

  it('counts an escalation as one more notification of the call', async () => {
    const id = await call();
    expect((await admit(id, 'dave', T0)).kind).toBe('direct');
    expect((await admit(id, 'dave', T0 + 1_000, 'escalation')).kind).toBe('direct');
    expect((await admit(await call(), 'dave', T0 + 2_000)).kind).toBe('digest');
  });

  it('says nothing is to be notified for a call attempt that is gone or was replaced', async () => {
    expect((await admit('call-never-stored', 'erin', T0)).kind).toBe('gone');
    const replaced = await call(1); // stored as attempt 1; admitting attempt 0
    expect((await admit(replaced, 'erin', T0)).kind).toBe('gone');
  });

  it('hands out each digest once, with its count; a refused one can be sent again', async () => {
    for (let i = 0; i < 5; i++) await admit(await call(), 'frank', T0 + i);
    const ledger = sut.ledger('frank', T0, 'slack:#ops', T0 + WINDOW);
    const claim = await ledger.claim();
    expect(claim).toMatchObject({ status: 'claimed', claimed: { count: 3 } });
    if (claim.status !== 'claimed') return;
    // Not recorded yet: whoever claims now finds it reserved (in doubt), never claimable twice.
    expect(await sut.ledger('frank', T0, 'slack:#ops').claim()).toMatchObject({ status: 'in_doubt' });
    await ledger.release(claim.claimed);
    const second = await sut.ledger('frank', T0, 'slack:#ops').claim();
    expect(second.status).toBe('claimed');
    if (second.status !== 'claimed') return;
    expect(await ledger.record(claim.claimed, { receipt: 'x' })).toBe(false); // the released reservation
    expect(await ledger.record(second.claimed, { receipt: 'C1 1.0' })).toBe(true);
    expect(await sut.ledger('frank', T0, 'slack:#ops').claim()).toEqual({
      status: 'delivered',
      receipt: 'C1 1.0',
    });
    // A target no held request went to has nothing to send.
    expect(await sut.ledger('frank', T0, 'email:nobody').claim()).toEqual({ status: 'not_due' });
  });

  it('notifies a request one by one once its window has started sending digests', async () => {
    for (let i = 0; i < 3; i++) await admit(await call(), 'grace', T0 + i);
    expect((await sut.ledger('grace', T0, 'email:bob').claim()).status).toBe('claimed');
    // Late (a replica whose clock is behind): it must not be counted into a digest already on its way.
    expect((await admit(await call(), 'grace', T0 + WINDOW - 1)).kind).toBe('direct');
  });

  it('holds nothing when the digest is off', async () => {
    const off = new DigestStore(redis, keys, WINDOW, undefined);
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(
        await off.admit(
          { requestId: await call(), attempt: 0, requester: 'hal', phase: 'request', targets },
          T0,
        ),
      );
    expect(answers.map((a) => a.kind)).toEqual(['direct', 'direct', 'direct', 'direct']);
  });
});

describe('the approval service with a digest', () => {
  const prefixes = uniquePrefixes('digest');
  const WINDOW_MS = 5_000;
  const AFTER = 3;
  const APPROVALS = approvalsConfig({
    groups: [group('ops', ['bob', 'carol'], '#ops')],
    defaults: { channels: ['slack', 'email', 'web'] },
  });
  const slack = new FakeSlackApi();
  const smtp = new SmtpCapture();
  let service: RunningApprovalService;
  let queues: AgentSideQueues;

  beforeAll(async () => {
    const [slackUrl, smtpUrl] = await Promise.all([slack.start(), smtp.start()]);
    service = await startApprovalService(
      approvalServiceEnv(prefixes, APPROVALS, {
        SLACK_BOT_TOKEN: 'xoxb-digest',
        SLACK_SIGNING_SECRET: 'digest-signing-secret',
        SLACK_API_URL: slackUrl,
        SMTP_URL: smtpUrl,
        NOTIFY_BACKOFF: '50ms',
        NOTIFY_DIGEST_AFTER: String(AFTER),
        NOTIFY_DIGEST_WINDOW: `${WINDOW_MS / 1_000}s`,
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

  const posts = (needle: string) => slack.find('chat.postMessage', needle);
  const requestMails = (to: string, callIds: Set<string>) =>
    smtp.to(to).filter((m) => callIds.has(linkCallId(linkIn(m.text)) ?? ''));
  const digestPosts = () =>
    slack.calls.filter(
      (c) => c.method === 'chat.postMessage' && String(c.body.text).includes('more approval request'),
    );
  const digestMails = (to: string) =>
    smtp.to(to).filter((m) => m.subject.startsWith('[Countersign] Digest:'));

  it('posts and emails the first requests of a flood one by one, then one digest per channel and approver', async () => {
    // Start at the beginning of a window, so the whole flood falls in one.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (Date.now() % WINDOW_MS) + 50));
    const flood = Array.from({ length: 8 }, (_, i) =>
      approvalRequest({ requester: 'alice', args: { service: `flood-${i}` } }),
    );
    const newcomer = approvalRequest({ requester: 'dave', args: { service: 'newcomer' } });
    for (const request of [...flood, newcomer]) await queues.submit(request);
    const receiver = service.app.get(RequestIntake);
    const requests = service.app.get(RequestStore);
    await waitFor(async () => {
      const stored = await Promise.all([...flood, newcomer].map((r) => requests.get(r.requestId)));
      return stored.every((a) => a?.status === 'pending');
    }, 'every request stored');
    // A redelivery of every request of the flood changes nothing: no post, no email, no second count.
    for (const request of flood) await receiver.receive(request);

    const floodIds = new Set(flood.map((r) => r.callId));
    const held = (await Promise.all(flood.map((r) => isHeld(r.requestId)))).filter(Boolean).length;
    expect(held).toBe(flood.length - AFTER);

    // The newcomer's own request is posted and emailed at once, whatever alice sends.
    await waitFor(() => posts(newcomer.callId).length === 1, 'Slack post of the newcomer');
    await waitFor(
      () => requestMails('bob@example.test', new Set([newcomer.callId])).length === 1,
      'mail to bob',
    );

    // At the window's end (and its grace): one digest in the channel, one email to each approver.
    await waitFor(
      () =>
        digestPosts().length === 1 &&
        digestMails('bob@example.test').length === 1 &&
        digestMails('carol@example.test').length === 1,
      'the digests',
      15_000,
    );
    const digest = digestPosts()[0];
    expect(digest.body.channel).toBe('#ops');
    expect(String(digest.body.text)).toContain(
      `${held} more approval requests from Alice (alice) arrived between`,
    );
    expect(String(digest.body.text)).toContain(`${service.url}/inbox`);
    expect(JSON.stringify(digest.body.blocks)).not.toContain('countersign_approve'); // nothing to click but the inbox
    for (const to of ['bob@example.test', 'carol@example.test']) {
      expect(digestMails(to)[0].subject).toBe(
        `[Countersign] Digest: ${held} more approval requests from alice`,
      );
      expect(digestMails(to)[0].text).toContain(`${service.url}/inbox`);
    }

    // One by one: only what was not held (a post per request, an email per approver), nothing of the held ones.
    const floodPosts = [...floodIds].flatMap((id) => posts(id));
    expect(floodPosts).toHaveLength(AFTER);
    expect(requestMails('bob@example.test', floodIds)).toHaveLength(AFTER);
    expect(requestMails('carol@example.test', floodIds)).toHaveLength(AFTER);

    // The held requests are requests like any other: listed, and decided.
    const heldId = (
      await Promise.all(flood.map(async (r) => ((await isHeld(r.requestId)) ? r.requestId : '')))
    ).find(Boolean)!;
    const listed = await fetch(`${service.url}/approvals?status=pending&limit=500`, {
      headers: asApprover('bob'),
    });
    expect(((await listed.json()) as { request: { callId: string } }[]).map((a) => a.request.callId)).toEqual(
      expect.arrayContaining([...floodIds, newcomer.callId]),
    );
    const vote = await fetch(`${service.url}/approvals/${heldId}/decisions`, {
      method: 'POST',
      headers: { ...asApprover('bob'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(vote.status).toBe(200);
    expect((await queues.waitForDecision(heldId)).decision).toBe('approve');

    // A retried digest job sends nothing again.
    const windowStart = Number(await heldWindow(heldId));
    await service.app.get(NotificationService).notifyDigest({
      requester: 'alice',
      windowStart,
      windowMs: WINDOW_MS,
      target: 'slack:#ops',
    });
    expect(digestPosts()).toHaveLength(1);
  });

  async function heldWindow(requestId: string): Promise<string | null> {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const field = await redis.hget(
        service.app.get(RequestStore).keys.request(requestId),
        'notify:0:request',
      );
      return field === 'direct' ? null : field;
    } finally {
      redis.disconnect();
    }
  }

  async function isHeld(requestId: string): Promise<boolean> {
    return (await heldWindow(requestId)) !== null;
  }
});

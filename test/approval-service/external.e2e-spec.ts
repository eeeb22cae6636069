// The approvals API for agents Countersign does not run: submit, wait, claim once, report; real Redis, real HTTP.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fingerprint, verifyWebhookSignature } from '@countersign/authorization';
import {
  ExternalApprovalViewSchema,
  QueueName,
  WEBHOOK_HEADERS,
  WebhookPayloadSchema,
  type ApprovalView,
  type ClaimResult,
  type ExternalApprovalView,
} from '@countersign/contracts';
import { CallState, ledgerFields } from '@countersign/call-ledger';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { ExternalHarness } from '../support/external-harness';
import { TEST_REDIS_URL, waitFor } from '../support/redis';

jest.setTimeout(30_000);

/** Collects webhook deliveries (headers and the exact body bytes); answers `status`. */
class WebhookReceiver {
  readonly received: { headers: IncomingHttpHeaders; body: string }[] = [];
  status = 200;
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const receiver = new WebhookReceiver();
let receiverUrl: string;
let harness: ExternalHarness;
let redis: Redis;
let run = 0;

beforeAll(async () => {
  receiverUrl = await receiver.start();
  harness = await ExternalHarness.start('external-api', { WEBHOOK_ALLOWED_ORIGINS: receiverUrl });
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await harness?.close();
  await receiver.stop();
  await redis?.quit();
});

/** A fresh run ID per test, so index entries never meet across tests. */
const nextRun = () => `run-${++run}`;

/** The approval's hash, which holds its call's ledger fields (CALL, under the prefix `call:`). */
const ledgerKey = (approvalId: string) => harness.service.app.get(RequestStore).keys.request(approvalId);
const CALL = ledgerFields('call:');

function call(over: Record<string, unknown> = {}) {
  return {
    runId: nextRun(),
    callId: 'call-1',
    toolName: 'refund_order',
    args: { orderId: '1234', amount: 25 },
    ...over,
  };
}

async function submit(body: unknown, as = 'agent-bot') {
  return harness.api<ExternalApprovalView>('POST', '/external-approvals', as, body);
}

/** Reads an approval as `as`, acting for `onBehalfOf` (the client itself when left out). */
async function read(
  approvalId: string,
  as = 'agent-bot',
  options: { waitMs?: number; onBehalfOf?: string } = {},
) {
  const query = new URLSearchParams();
  if (options.waitMs !== undefined) query.set('waitMs', String(options.waitMs));
  if (options.onBehalfOf !== undefined) query.set('onBehalfOf', options.onBehalfOf);
  const search = query.toString() ? `?${query.toString()}` : '';
  return harness.api<ExternalApprovalView & { error?: string; message?: string }>(
    'GET',
    `/external-approvals/${approvalId}${search}`,
    as,
  );
}

async function claim(approvalId: string, fp: string, as = 'agent-bot', onBehalfOf?: string) {
  return harness.api<ClaimResult & { error?: string; message?: string }>(
    'POST',
    `/external-approvals/${approvalId}/claim`,
    as,
    { fingerprint: fp, ...(onBehalfOf === undefined ? {} : { onBehalfOf }) },
  );
}

async function complete(approvalId: string, body: unknown, as = 'agent-bot') {
  return harness.api<ExternalApprovalView & { error?: string; message?: string }>(
    'POST',
    `/external-approvals/${approvalId}/completion`,
    as,
    body,
  );
}

describe('submitting a call', () => {
  it('answers pending with an approval ID, the fingerprint, the expiry and the inbox link', async () => {
    const body = call();
    const { status, json } = await submit(body);
    expect(status).toBe(201);
    const view = ExternalApprovalViewSchema.parse(json);
    expect(view).toMatchObject({
      status: 'pending',
      runId: body.runId,
      callId: 'call-1',
      toolName: 'refund_order',
      requester: 'agent-bot',
      fingerprint: fingerprint('refund_order', body.args),
      inboxUrl: `${harness.url}/inbox#${view.approvalId}`,
    });
    expect(Date.parse(view.expiresAt)).toBeGreaterThan(Date.now());
    // Approvers see it like any other request, keyed by the approval ID.
    const shown = await harness.api<ApprovalView>('GET', `/approvals/${view.approvalId}`, 'bob');
    expect(shown.status).toBe(200);
    expect(shown.json.request).toMatchObject({
      callId: view.approvalId,
      agent: 'agent-bot',
      args: body.args,
      external: { principal: 'agent-bot', callId: 'call-1' },
    });
  });

  it('returns the same approval for the same call and arguments, a new one for other arguments', async () => {
    const body = call();
    const first = await submit(body);
    // Key order does not change the fingerprint, so it is the same call.
    const again = await submit({ ...body, args: { amount: 25, orderId: '1234' } });
    expect(again.status).toBe(200);
    expect(again.json.approvalId).toBe(first.json.approvalId);
    const changed = await submit({ ...body, args: { orderId: '1234', amount: 2500 } });
    expect(changed.status).toBe(201);
    expect(changed.json.approvalId).not.toBe(first.json.approvalId);
    // Another client's call with the same run and call IDs is another approval.
    const other = await submit(body, 'other-bot');
    expect(other.json.approvalId).not.toBe(first.json.approvalId);
  });

  it('gives two submissions of the same call at once one approval', async () => {
    const body = call();
    const answers = await Promise.all([submit(body), submit(body), submit(body)]);
    expect(new Set(answers.map((a) => a.json.approvalId)).size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect((await harness.pendingFor('bob')).filter((id) => id === answers[0].json.approvalId)).toHaveLength(
      1,
    );
  });

  it('denies at once a call that no rule routes to anyone', async () => {
    const { status, json } = await submit(call(), 'other-bot');
    expect(status).toBe(201);
    expect(json).toMatchObject({ status: 'deny', decidedBy: 'no_route', reason: 'no approver route' });
  });

  it.each([
    ['runId', { runId: 'has:colon' }, 'runId'],
    ['toolName', { toolName: 'not a name' }, 'toolName'],
    ['args', { args: [1, 2] }, 'args'],
    ['an unknown field', { agent: 'ops' }, '(root)'],
    ['onBehalfOf', { onBehalfOf: '' }, 'onBehalfOf'],
    ['webhook.url', { webhook: { url: 'not a url' } }, 'webhook.url'],
    ['context.runDescription', { context: { runDescription: 'x'.repeat(2001) } }, 'context.runDescription'],
  ])('refuses a bad %s with 400 naming the field', async (_what, over, field) => {
    const { status, json } = await harness.api<{ message: string; issues: { path: string }[] }>(
      'POST',
      '/external-approvals',
      'agent-bot',
      call(over),
    );
    expect(status).toBe(400);
    expect(json.issues.map((i) => i.path)).toContain(field);
  });

  it('refuses arguments over 64 KiB, naming args', async () => {
    const { status, json } = await harness.api<{ issues: { path: string }[] }>(
      'POST',
      '/external-approvals',
      'agent-bot',
      call({ args: { blob: 'x'.repeat(70_000) } }),
    );
    expect(status).toBe(400);
    expect(json.issues.map((i) => i.path)).toContain('args');
  });

  it('needs the approvals-client role, and a credential', async () => {
    expect((await submit(call(), 'alice')).status).toBe(403);
    const res = await fetch(`${harness.url}/external-approvals`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(call()),
    });
    expect(res.status).toBe(401);
  });

  it('submits for a person only with an actAs entry naming them', async () => {
    const mine = await submit(call({ onBehalfOf: 'alice' }));
    expect(mine.status).toBe(201);
    expect(mine.json.requester).toBe('alice');
    expect((await submit(call({ onBehalfOf: 'bob' }))).status).toBe(403);
    expect((await submit(call({ onBehalfOf: 'alice' }), 'other-bot')).status).toBe(403);
  });

  it('refuses a webhook to an origin that is not allowed, naming webhook.url', async () => {
    const { status, json } = await harness.api<{ issues: { path: string }[] }>(
      'POST',
      '/external-approvals',
      'agent-bot',
      call({ webhook: { url: 'http://169.254.169.254/latest/meta-data' } }),
    );
    expect(status).toBe(400);
    expect(json.issues.map((i) => i.path)).toEqual(['webhook.url']);
  });
});

describe('deciding', () => {
  it('never lets the requester decide its own call', async () => {
    const { json } = await submit(call({ onBehalfOf: 'alice' }));
    const vote = await harness.api<{ error: string }>(
      'POST',
      `/approvals/${json.approvalId}/decisions`,
      'alice',
      { decision: 'approve' },
    );
    expect(vote.status).toBe(403);
    expect(vote.json.error).toBe('self_approval');
    expect((await read(json.approvalId, 'agent-bot', { onBehalfOf: 'alice' })).json.status).toBe('pending');
  });

  it('counts a quorum like any other request', async () => {
    const { json } = await submit(call({ toolName: 'pair_transfer' }));
    await harness.approve(json.approvalId, 'carol');
    expect((await read(json.approvalId)).json.status).toBe('pending');
    await harness.approve(json.approvalId, 'dave');
    expect((await read(json.approvalId)).json).toMatchObject({
      status: 'allow',
      approvers: ['carol', 'dave'],
    });
  });

  it('publishes nothing to the worker’s approval-decisions queue', async () => {
    const { json } = await submit(call());
    await harness.approve(json.approvalId);
    await waitFor(async () => (await read(json.approvalId)).json.status === 'allow', 'decided');
    const decisions = new Queue(QueueName.ApprovalDecisions, {
      connection: redis,
      prefix: harness.prefixes.queuePrefix,
    });
    try {
      const counts = await decisions.getJobCounts();
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    } finally {
      await decisions.close();
    }
  });
});

describe('waiting', () => {
  it('answers a bounded wait with the decision as soon as it is made', async () => {
    const { json } = await submit(call());
    const waiting = read(json.approvalId, 'agent-bot', { waitMs: 20_000 });
    // The wait is in place before the decision: nothing but the decision can end it this early.
    await new Promise((r) => setTimeout(r, 200));
    await harness.deny(json.approvalId, 'not during the freeze');
    const started = Date.now();
    const { json: decided } = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(decided).toMatchObject({ status: 'deny', decidedBy: 'person', reason: 'not during the freeze' });
  });

  it('answers pending once the wait is over', async () => {
    const { json } = await submit(call());
    const { status, json: view } = await read(json.approvalId, 'agent-bot', { waitMs: 300 });
    expect(status).toBe(200);
    expect(view.status).toBe('pending');
  });

  it('refuses a wait over 30 s, naming waitMs', async () => {
    const { json } = await submit(call());
    const res = await harness.api<{ issues: { path: string }[] }>(
      'GET',
      `/external-approvals/${json.approvalId}?waitMs=30001`,
      'agent-bot',
    );
    expect(res.status).toBe(400);
    expect(res.json.issues.map((i) => i.path)).toEqual(['waitMs']);
  });

  it('shows an approval only to the client that submitted it', async () => {
    const { json } = await submit(call());
    expect((await read(json.approvalId, 'other-bot')).status).toBe(404);
    expect((await read('xa-' + '0'.repeat(32))).status).toBe(404);
    expect((await read('call-1')).status).toBe(400);
  });
});

describe('the requester is part of a call’s identity (issue 24, finding 2)', () => {
  // team-bot may act for alice and for bob; its calls are routed to ops (bob, carol, alice).
  const wire = (runId: string, onBehalfOf: string) => ({
    runId,
    callId: 'call-9',
    toolName: 'wire_money',
    args: { to: 'acct-9', amount: 900 },
    onBehalfOf,
  });

  /** alice's wire, approved by bob: what a submission for bob of the same run, call and arguments used to get. */
  async function approvedForAlice() {
    const runId = nextRun();
    const forAlice = await submit(wire(runId, 'alice'), 'team-bot');
    expect([forAlice.status, forAlice.json.requester]).toEqual([201, 'alice']);
    await harness.approve(forAlice.json.approvalId, 'bob');
    return { runId, approvalId: forAlice.json.approvalId, fp: forAlice.json.fingerprint };
  }

  it('gives the same call submitted for another person a new approval, routed and asked about on its own', async () => {
    const alice = await approvedForAlice();
    const forBob = await submit(wire(alice.runId, 'bob'), 'team-bot');
    expect(forBob.status).toBe(201);
    expect(forBob.json).toMatchObject({ status: 'pending', requester: 'bob', client: 'team-bot' });
    expect(forBob.json.approvalId).not.toBe(alice.approvalId);
    // Asked about on its own: pending for ops; bob, its requester, may not decide it.
    expect(await harness.pendingFor('carol')).toContain(forBob.json.approvalId);
    const vote = await harness.api<{ error: string }>(
      'POST',
      `/approvals/${forBob.json.approvalId}/decisions`,
      'bob',
      { decision: 'approve' },
    );
    expect([vote.status, vote.json.error]).toEqual([403, 'self_approval']);
    // alice's call submitted again still finds alice's approval.
    const again = await submit(wire(alice.runId, 'alice'), 'team-bot');
    expect([again.status, again.json.approvalId, again.json.status]).toEqual([
      200,
      alice.approvalId,
      'allow',
    ]);
  });

  it('answers a claim, read or report for another requester exactly like an unknown approval', async () => {
    const { approvalId, fp } = await approvedForAlice();
    const unknownId = 'xa-' + 'f'.repeat(32);
    // Status and body, with the approval's ID in place of the unknown one.
    const likeUnknown = (
      answer: { status: number; json: unknown },
      unknown: { status: number; json: unknown },
    ) =>
      expect(
        JSON.parse(JSON.stringify([answer.status, answer.json]).replaceAll(approvalId, unknownId)),
      ).toEqual([unknown.status, unknown.json]);
    // The client acting for itself, and acting for bob: neither is alice's call.
    for (const onBehalfOf of [undefined, 'bob']) {
      likeUnknown(
        await claim(approvalId, fp, 'team-bot', onBehalfOf),
        await claim(unknownId, fp, 'team-bot', onBehalfOf),
      );
      likeUnknown(
        await read(approvalId, 'team-bot', { onBehalfOf }),
        await read(unknownId, 'team-bot', { onBehalfOf }),
      );
      likeUnknown(
        await complete(approvalId, { outcome: 'ok', onBehalfOf }, 'team-bot'),
        await complete(unknownId, { outcome: 'ok', onBehalfOf }, 'team-bot'),
      );
    }
    expect((await claim(approvalId, fp, 'team-bot', 'bob')).status).toBe(404);
    // The refusals used nothing up: alice's call is claimed for alice, once.
    const claimed = await claim(approvalId, fp, 'team-bot', 'alice');
    expect([claimed.status, claimed.json.requester]).toEqual([200, 'alice']);
    expect((await read(approvalId, 'team-bot', { onBehalfOf: 'alice' })).json.claim).toBeDefined();
  });

  it('refuses to read, claim or report for a person the client may not act for', async () => {
    const { approvalId, fp } = await approvedForAlice();
    expect((await claim(approvalId, fp, 'agent-bot', 'bob')).status).toBe(403);
    expect((await read(approvalId, 'agent-bot', { onBehalfOf: 'bob' })).status).toBe(403);
    expect((await complete(approvalId, { outcome: 'ok', onBehalfOf: 'bob' }, 'agent-bot')).status).toBe(403);
    // A client that may act for anyone still names a principal of the directory, or gets 400 naming the field.
    const nobody = await harness.api<{ message: string; issues: { path: string }[] }>(
      'GET',
      `/external-approvals/${approvalId}?onBehalfOf=nobody`,
      'mcp-gateway',
    );
    expect([nobody.status, nobody.json.issues.map((i) => i.path)]).toEqual([400, ['onBehalfOf']]);
    expect(nobody.json.message).toBe('invalid query: onBehalfOf: unknown principal "nobody"');
  });

  it('audits every submission that attaches to an existing approval', async () => {
    const body = { ...call(), onBehalfOf: 'alice' };
    const first = await submit(body);
    const again = await submit(body);
    expect(again.status).toBe(200);
    const audit = await waitFor(async () => {
      const entries = await harness.audit(first.json.approvalId);
      return entries.some((e) => e.type === 'request.resubmitted') ? entries : undefined;
    }, 'the audit of the second submission');
    expect(audit.filter((e) => e.type === 'request.resubmitted')).toEqual([
      expect.objectContaining({
        runId: body.runId,
        actor: 'agent-bot',
        detail: expect.objectContaining({
          client: 'agent-bot',
          requester: 'alice',
          approvalId: first.json.approvalId,
          clientCallId: 'call-1',
        }),
      }),
    ]);
  });
});

describe('claiming and completing', () => {
  async function approved(over: Record<string, unknown> = {}) {
    const body = call(over);
    const { json } = await submit(body);
    await harness.approve(json.approvalId);
    return { approvalId: json.approvalId, fp: json.fingerprint, body };
  }

  it('lets the first claim run the call with the approved arguments and refuses the second with 409', async () => {
    const { approvalId, fp, body } = await approved();
    const first = await claim(approvalId, fp);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      approvalId,
      toolName: body.toolName,
      args: body.args,
      fingerprint: fp,
    });
    const second = await claim(approvalId, fp);
    expect(second.status).toBe(409);
    expect(second.json.error).toBe('already_claimed');
    expect((await read(approvalId)).json.claim?.claimedAt).toBe(first.json.claimedAt);
  });

  it('lets exactly one of many simultaneous claims through', async () => {
    const { approvalId, fp } = await approved();
    const answers = await Promise.all(Array.from({ length: 8 }, () => claim(approvalId, fp)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('refuses to claim a call that is not decided (409), denied (403) or of other arguments (409)', async () => {
    const pending = await submit(call());
    expect((await claim(pending.json.approvalId, pending.json.fingerprint)).json.error).toBe('not_decided');

    const denied = await submit(call());
    await harness.deny(denied.json.approvalId, 'no');
    const refused = await claim(denied.json.approvalId, denied.json.fingerprint);
    expect([refused.status, refused.json.error]).toEqual([403, 'denied']);

    const { approvalId } = await approved();
    const other = await claim(approvalId, fingerprint('refund_order', { orderId: '1234', amount: 2500 }));
    expect([other.status, other.json.error]).toEqual([409, 'fingerprint_mismatch']);
    // The refusal did not use the claim up.
    expect((await claim(approvalId, (await read(approvalId)).json.fingerprint)).status).toBe(200);
  });

  it('answers 410 for an approval that expired', async () => {
    const { json } = await submit(call({ toolName: 'short_task' }));
    const expired = await waitFor(async () => {
      const view = (await read(json.approvalId, 'agent-bot', { waitMs: 5_000 })).json;
      return view.status === 'deny' ? view : undefined;
    }, 'expiry');
    expect(expired).toMatchObject({ decidedBy: 'expired', reason: 'expired' });
    const res = await claim(json.approvalId, json.fingerprint);
    expect([res.status, res.json.error]).toEqual([410, 'expired']);
  });

  it('does not let another client claim, and refuses a completion before a claim', async () => {
    const { approvalId, fp } = await approved();
    expect((await claim(approvalId, fp, 'other-bot')).status).toBe(404);
    const early = await complete(approvalId, { outcome: 'ok' });
    expect([early.status, early.json.error]).toEqual([409, 'not_claimed']);
  });

  it('takes one completion report into the audit log and refuses a second', async () => {
    const { approvalId, fp } = await approved();
    await claim(approvalId, fp);
    const done = await complete(approvalId, { outcome: 'ok', summary: 'refunded 25' });
    expect(done.status).toBe(200);
    expect(done.json.claim?.completion).toMatchObject({ outcome: 'ok', summary: 'refunded 25' });
    const again = await complete(approvalId, { outcome: 'error' });
    expect([again.status, again.json.error]).toEqual([409, 'already_completed']);
    const audit = await waitFor(async () => {
      const entries = await harness.audit(approvalId);
      return entries.some((e) => e.type === 'tool.executed') ? entries : undefined;
    }, 'audit of the completion');
    expect(audit.map((e) => e.type)).toEqual(
      expect.arrayContaining(['request.created', 'decision.published', 'tool.claimed', 'tool.executed']),
    );
    expect(audit.find((e) => e.type === 'tool.executed')).toMatchObject({
      actor: 'agent-bot',
      detail: { outcome: 'ok', summary: 'refunded 25', source: 'external', clientCallId: 'call-1' },
    });
  });

  // The exactly-once ledger of every governed call (libs/call-ledger) holds the claim: its state, under the approval's
  // hash prefix `call:`, is what lets a claim through, not a field of the approvals API's own.
  it('keeps the claimed call on the call ledger: executing under its client, then done with its report', async () => {
    const { approvalId, fp } = await approved();
    const key = ledgerKey(approvalId);
    expect(await redis.hget(key, CALL.state)).toBeNull();
    await claim(approvalId, fp);
    expect(await redis.hmget(key, CALL.state, CALL.token)).toEqual([CallState.Executing, 'agent-bot']);
    await complete(approvalId, { outcome: 'error', summary: 'timed out' });
    const [state, token, result] = await redis.hmget(key, CALL.state, CALL.token, CALL.result);
    expect([state, token]).toEqual([CallState.Done, null]);
    expect(JSON.parse(result!)).toMatchObject({ outcome: 'error', summary: 'timed out' });
  });

  it('refuses a claim once the call ledger has the call, whatever else the approval holds', async () => {
    const { approvalId, fp } = await approved();
    await redis.hset(ledgerKey(approvalId), CALL.state, CallState.Done);
    const res = await claim(approvalId, fp);
    expect([res.status, res.json.error]).toEqual([409, 'already_claimed']);
  });

  it('refuses a bad completion report with 400 naming the field', async () => {
    const { approvalId } = await approved();
    const res = await harness.api<{ issues: { path: string }[] }>(
      'POST',
      `/external-approvals/${approvalId}/completion`,
      'agent-bot',
      { outcome: 'maybe' },
    );
    expect(res.status).toBe(400);
    expect(res.json.issues.map((i) => i.path)).toEqual(['outcome']);
  });
});

describe('webhooks', () => {
  it('posts the decision signed with the client’s own secret, which the verify helper accepts', async () => {
    const { json: secretAnswer } = await harness.api<{ secret: string }>(
      'GET',
      '/external-approvals/webhook-secret',
      'agent-bot',
    );
    const { json: otherSecret } = await harness.api<{ secret: string }>(
      'GET',
      '/external-approvals/webhook-secret',
      'other-bot',
    );
    expect(secretAnswer.secret).not.toBe(otherSecret.secret);

    const { json } = await submit(call({ webhook: { url: `${receiverUrl}/hooks/countersign` } }));
    expect(receiver.received.filter((r) => r.body.includes(json.approvalId))).toHaveLength(0);
    await harness.approve(json.approvalId);
    const delivery = await waitFor(
      () => receiver.received.find((r) => r.body.includes(json.approvalId)),
      'webhook delivery',
    );
    const check = {
      body: delivery.body,
      timestamp: delivery.headers[WEBHOOK_HEADERS.timestamp] as string,
      signature: delivery.headers[WEBHOOK_HEADERS.signature] as string,
    };
    expect(verifyWebhookSignature({ secret: secretAnswer.secret, ...check })).toEqual({ ok: true });
    expect(verifyWebhookSignature({ secret: otherSecret.secret, ...check }).ok).toBe(false);
    expect(verifyWebhookSignature({ secret: secretAnswer.secret, ...check, body: check.body + ' ' }).ok).toBe(
      false,
    );
    expect(
      verifyWebhookSignature({ secret: secretAnswer.secret, ...check, now: Date.now() + 10 * 60_000 }).ok,
    ).toBe(false);
    expect(WebhookPayloadSchema.parse(JSON.parse(delivery.body)).approval).toMatchObject({
      approvalId: json.approvalId,
      status: 'allow',
    });
  });

  it('retries a webhook the receiver refused', async () => {
    receiver.status = 503;
    try {
      const { json } = await submit(call({ webhook: { url: `${receiverUrl}/hooks/retry` } }));
      await harness.approve(json.approvalId);
      await waitFor(
        () => receiver.received.filter((r) => r.body.includes(json.approvalId)).length >= 1,
        'a refused delivery',
      );
      receiver.status = 200;
      await waitFor(
        () => receiver.received.filter((r) => r.body.includes(json.approvalId)).length >= 2,
        'a retried delivery',
      );
    } finally {
      receiver.status = 200;
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes every route of the approvals API', async () => {
    const doc = (await (await fetch(`${harness.url}/docs-json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/external-approvals'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/external-approvals/{approvalId}'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/external-approvals/{approvalId}/claim'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/external-approvals/{approvalId}/completion'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/external-approvals/webhook-secret'])).toEqual(['get']);
  });
});

describe('the rate limits of submissions (issue 24, finding 4)', () => {
  // Services of their own, with low limits: their counts never reach the other tests.
  const limitedServices: ExternalHarness[] = [];
  const startLimited = async (env: Record<string, string>) => {
    const limited = await ExternalHarness.start('external-limits', env);
    limitedServices.push(limited);
    return limited;
  };
  afterAll(() => Promise.all(limitedServices.map((s) => s.close())));

  /** `n` submissions one after the other (the counts are then exact), each a new call. */
  async function submissions(
    limited: ExternalHarness,
    n: number,
    as: string,
    over: Record<string, unknown> = {},
  ) {
    const answers: { status: number; retryAfter: string | null; message?: string }[] = [];
    for (let i = 0; i < n; i++) {
      const { status, json, headers } = await limited.api<{ message?: string }>(
        'POST',
        '/external-approvals',
        as,
        call(over),
      );
      answers.push({ status, retryAfter: headers.get('retry-after'), message: json.message });
    }
    return answers;
  }

  function expectRetryAfter(answer: { status: number; retryAfter: string | null }): void {
    expect(answer.status).toBe(429);
    const seconds = Number(answer.retryAfter);
    expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60).toBe(true);
  }

  it('refuses a client past its limit with 429 and Retry-After; another client still submits', async () => {
    const limited = await startLimited({
      RATE_LIMIT_EXTERNAL_SUBMISSIONS: '4/1m',
      RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER: '2/1m',
    });
    // Acting for itself: only the client's own limit counts.
    const bot = await submissions(limited, 5, 'agent-bot');
    expect(bot.map((a) => a.status)).toEqual([201, 201, 201, 201, 429]);
    expectRetryAfter(bot[4]);
    expect(bot[4].message).toBe(
      `too many approval submissions by agent-bot: at most 4/1m (RATE_LIMIT_EXTERNAL_SUBMISSIONS); retry after ${bot[4].retryAfter} s`,
    );
    expect(bot[0].retryAfter).toBeNull();
    expect((await submissions(limited, 1, 'other-bot'))[0].status).toBe(201);
  });

  it('refuses submissions for one person past the per-person limit, whichever client sends them', async () => {
    const limited = await startLimited({
      RATE_LIMIT_EXTERNAL_SUBMISSIONS: '6/1m',
      RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER: '2/1m',
    });
    const forAlice = await submissions(limited, 3, 'team-bot', { onBehalfOf: 'alice' });
    expect(forAlice.map((a) => a.status)).toEqual([201, 201, 429]);
    expectRetryAfter(forAlice[2]);
    expect(forAlice[2].message).toBe(
      `too many approval submissions for alice: at most 2/1m (RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER); retry after ${forAlice[2].retryAfter} s`,
    );
    // Naming a person a client may not act for is refused, and uses up nothing of that person's count.
    const notAllowed = await submissions(limited, 3, 'other-bot', { onBehalfOf: 'bob' });
    expect(notAllowed.map((a) => a.status)).toEqual([403, 403, 403]);
    // Another person, same client (still under its limit of 6): counted apart.
    expect((await submissions(limited, 2, 'team-bot', { onBehalfOf: 'bob' })).map((a) => a.status)).toEqual([
      201, 201,
    ]);
    // alice through another client: the same person's count.
    expect((await submissions(limited, 1, 'mcp-gateway', { onBehalfOf: 'alice' }))[0].status).toBe(429);
    // Only the two accepted submissions for alice became approvals.
    const pending = await limited.api<{ request: { requester: string } }[]>(
      'GET',
      '/approvals?status=pending',
      'bob',
    );
    expect(pending.json.filter((a) => a.request.requester === 'alice')).toHaveLength(2);
  });

  it('counts submissions by source address before the credential is checked', async () => {
    const limited = await startLimited({ RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS: '3/1m' });
    const guesses = await submissions(limited, 3, 'guessed');
    expect(guesses.map((a) => a.status)).toEqual([401, 401, 401]);
    const refused = (await submissions(limited, 1, 'agent-bot'))[0];
    expectRetryAfter(refused);
    expect(refused.message).toContain(
      'too many approval submissions from 127.0.0.1: at most 3/1m (RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS)',
    );
  });
});

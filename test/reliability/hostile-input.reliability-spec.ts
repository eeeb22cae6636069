// Hostile input against the whole system (agent worker + approval service, Slack stand-in, SMTP capture):
// forged, replayed, altered, late and expired decisions; garbage and oversized messages on every queue;
// malformed bodies on every HTTP endpoint; bad Slack signatures; tampered, expired and reused email tokens.
// Each is refused with a clear error (audited where the design says so; what no credential vouches for, such as a
// bad Slack signature or a forged link, is counted in a metric instead) and nothing executes: the target
// services' restart counts on /demo/infra stay 0 and their runs stay parked, until a genuine decision
// finally runs each call exactly once.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { withSignature } from '@countersign/authorization';
import {
  ApprovalServiceJobName,
  ApprovalServiceQueueName,
  type AuditEntry,
  JobName,
  jobIds,
  QueueName,
  type SignedDecision,
} from '@countersign/contracts';
import { infraKeys } from '@countersign/demo-infra';
import { signLinkToken } from '../../apps/approval-service/src/notifications/email/link-token';
import { slackSignature } from '../../apps/approval-service/src/channels/slack/slack-signature';
import { TEST_REDIS_URL, waitFor } from '../support/redis';
import {
  restartScript,
  SYSTEM_APPROVALS_CONFIG,
  SYSTEM_APPROVERS,
  SYSTEM_SECRETS,
  TestSystem,
} from '../support/system';
import { ScenarioTally } from './support/scenario-tally';

const APPROVALS = {
  ...SYSTEM_APPROVALS_CONFIG,
  rules: [
    { name: 'expiring', match: { args: { service: 'expiring*' } }, groups: ['ops'], expiresIn: '1500ms' },
  ],
};

let system: TestSystem;
let redis: Redis;
const queues: Record<string, Queue> = {};
const tally = new ScenarioTally('hostile input');
/** Services a hostile case targeted: none may ever have been restarted by one. */
const targets: { service: string; runId: string; callId: string }[] = [];

beforeAll(async () => {
  system = await TestSystem.start('hostile', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(APPROVALS) },
  });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  for (const name of Object.values(QueueName))
    queues[name] = new Queue(name, { connection: redis, prefix: system.prefixes.queuePrefix });
});

afterAll(async () => {
  await Promise.allSettled(Object.values(queues).map((q) => q.close()));
  await redis?.quit();
  await system?.close();
});

async function restarts(service: string): Promise<number> {
  return (await system.infra()).services.find((s) => s.name === service)?.restarts ?? 0;
}

/** A parked run restarting its own service, and the signed decision the approval service would publish for it. */
async function parkedTarget(service: string) {
  await redis.hset(infraKeys(system.prefixes.keyPrefix).services, {
    [`${service}:status`]: 'healthy',
    [`${service}:replicas`]: '1',
    [`${service}:restarts`]: '0',
  });
  const runId = await system.startRun(restartScript(service));
  const call = await system.waitForPendingCall(runId);
  await system.waitForApproval(call.callId);
  targets.push({ service, runId, callId: call.callId });
  const genuine = (over: Partial<SignedDecision> = {}) =>
    withSignature(
      {
        requestId: call.requestId!,
        callId: call.callId,
        runId,
        decision: 'approve' as const,
        decidedBy: 'person' as const,
        approvers: ['bob'],
        fingerprint: call.fingerprint,
        shown: { toolName: call.toolName, args: call.args },
        attempt: 0,
        decidedAt: new Date().toISOString(),
        ...over,
      },
      SYSTEM_SECRETS.DECISION_SIGNING_SECRET,
    );
  return { service, runId, call, genuine };
}

/** Adds a job and waits until it left the queue; returns its failure reason ('' when it completed). */
async function settle(queue: string, name: string, data: unknown, jobId?: string): Promise<string> {
  const job = await queues[queue].add(name, data, jobId ? { jobId, attempts: 1 } : { attempts: 1 });
  return waitFor(async () => {
    const state = await queues[queue].getJobState(job.id!);
    if (state === 'completed') return 'completed';
    if (state === 'failed') return (await queues[queue].getJob(job.id!))!.failedReason || 'failed';
    return undefined;
  }, `${queue} job ${job.id} to settle`);
}

/** Requests refused before they named anyone, as /metrics counts them. */
async function unauthenticated(channel: string, reason: string): Promise<number> {
  const text = await (
    await fetch(`${system.approvalUrl}/metrics`, { headers: system.bearer('scraper') })
  ).text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`countersign_unauthenticated_requests_total{channel="${channel}",reason="${reason}"}`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function auditHas(filter: (e: AuditEntry) => boolean): Promise<boolean> {
  return Boolean(
    await waitFor(
      async () => (await system.audit({}, 'auditor')).some(filter),
      'the audit entry',
      10_000,
      50,
    ).catch(() => false),
  );
}

/** Records one case: `refused` must be true, and it must come with a readable reason. */
function expectRefused(what: string, refused: boolean, reason: string): void {
  tally.case();
  if (refused && reason.trim()) tally.refusedAsExpected();
  else tally.wronglyExecuted(`${what}: not refused (${reason || 'no reason given'})`);
}

describe('hostile input', () => {
  it('refuses forged, replayed, altered and unsigned decisions pushed straight onto the queue', async () => {
    const a = await parkedTarget('hostile-a');
    const b = await parkedTarget('hostile-b');
    const forged = withSignature({ ...a.genuine(), signature: undefined }, 'not-the-signing-secret-at-all');
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['forged (bad HMAC)', forged, /invalid signature/],
      ['unsigned', { ...a.genuine(), signature: undefined }, /signature/],
      [
        'genuine, replayed for another call ID',
        { ...a.genuine(), callId: b.call.callId, runId: b.runId },
        /invalid signature/,
      ],
      [
        'genuine, replayed for another request',
        { ...a.genuine(), requestId: b.call.requestId, callId: b.call.callId, runId: b.runId },
        /invalid signature/,
      ],
      [
        'genuine, arguments changed',
        { ...a.genuine(), shown: { toolName: 'restart_service', args: { service: 'api' } } },
        /invalid signature/,
      ],
      [
        'genuine, turned from deny into approve',
        { ...a.genuine({ decision: 'deny' }), decision: 'approve' },
        /invalid signature/,
      ],
      [
        'signature of another field order / junk',
        { ...a.genuine(), signature: 'f'.repeat(64) },
        /invalid signature/,
      ],
    ];
    for (const [what, data, expected] of cases) {
      const reason = await settle(
        QueueName.ApprovalDecisions,
        JobName.Decision,
        JSON.parse(JSON.stringify(data)),
      );
      expectRefused(`decision ${what}`, expected.test(reason), reason);
    }
    expectRefused(
      'forged decision audited',
      await auditHas(
        (e) => e.type === 'decision.rejected' && e.callId === a.call.callId && e.service === 'agent-worker',
      ),
      'decision.rejected',
    );

    // Signed with the real secret, but for arguments other than the parked call's: the fingerprint does not match.
    const mismatch = a.genuine({
      fingerprint: b.call.fingerprint,
      shown: { toolName: b.call.toolName, args: b.call.args },
    });
    const outcome = await settle(QueueName.ApprovalDecisions, JobName.Decision, mismatch);
    const ignored = await auditHas(
      (e) =>
        e.type === 'decision.ignored' &&
        e.callId === a.call.callId &&
        e.detail.reason === 'fingerprint_mismatch',
    );
    expectRefused(
      'signed decision whose fingerprint differs from the parked call',
      outcome === 'completed' && ignored,
      'fingerprint_mismatch',
    );
    // A decision for a call ID that is in no frontier, and one answering an attempt that was never asked.
    const unknown = a.genuine({ callId: 'no-such-call' });
    expectRefused(
      'decision for an unknown call',
      (await settle(QueueName.ApprovalDecisions, JobName.Decision, unknown)) === 'completed' &&
        (await auditHas((e) => e.type === 'decision.ignored' && e.callId === 'no-such-call')),
      'call_not_in_frontier',
    );
    const stale = a.genuine({ attempt: 3 });
    expectRefused(
      'decision for another attempt',
      (await settle(QueueName.ApprovalDecisions, JobName.Decision, stale, 'stale-attempt')) === 'completed' &&
        (await auditHas(
          (e) =>
            e.type === 'decision.ignored' &&
            e.callId === a.call.callId &&
            e.detail.reason === 'stale_attempt',
        )),
      'stale_attempt',
    );

    for (const t of [a, b]) {
      expect(await restarts(t.service)).toBe(0);
      expect((await system.run(t.runId)).status).toBe('awaiting_confirmation');
    }
  });

  it('runs a call once however often its genuine decision comes back, and refuses late votes', async () => {
    const t = await parkedTarget('hostile-decided');
    expect(
      (await system.api('POST', `/approvals/${t.call.callId}/decisions`, 'bob', { decision: 'approve' }))
        .status,
    ).toBe(200);
    await system.waitForStatus(t.runId, 'completed');
    const published = (await queues[QueueName.ApprovalDecisions].getJob(jobIds.decision(t.call.requestId!)))!
      .data as SignedDecision;
    for (let i = 0; i < 3; i++) {
      const reason = await settle(
        QueueName.ApprovalDecisions,
        JobName.Decision,
        published,
        `replay-${t.call.callId}-${i}`,
      );
      expectRefused(
        `genuine decision replayed after the call ran (${i + 1})`,
        reason === 'completed',
        'ignored: the call is no longer pending',
      );
    }
    const late = await system.api<{ message: string }>(
      'POST',
      `/approvals/${t.call.callId}/decisions`,
      'carol',
      { decision: 'deny' },
    );
    expectRefused(
      'API vote on a decided call',
      late.status === 409 && /already decided by/.test(late.json.message),
      late.json.message,
    );
    expectRefused(
      'late vote audited',
      await auditHas(
        (e) =>
          e.type === 'decision.rejected' &&
          e.callId === t.call.callId &&
          e.detail.reason === 'already_decided',
      ),
      'already_decided',
    );
    expect(await restarts(t.service)).toBe(1);
  });

  it('denies an expired request and refuses every decision that comes after it', async () => {
    const t = await parkedTarget('expiring-1');
    const done = await system.waitForStatus(t.runId, 'completed', 20_000);
    expect(JSON.stringify(done.messages)).toMatch(/expired/);
    const { link } = await system.mailTo('bob', t.call.callId);
    const viaApi = await system.api<{ message: string }>(
      'POST',
      `/approvals/${t.call.callId}/decisions`,
      'bob',
      { decision: 'approve' },
    );
    expectRefused(
      'API vote on an expired request',
      viaApi.status === 409 && /expired/.test(viaApi.json.message),
      viaApi.json.message,
    );
    const viaMail = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=approve',
    });
    expectRefused(
      'email link of an expired request',
      viaMail.status >= 400 && viaMail.status < 500,
      `${viaMail.status}`,
    );
    const viaQueue = await settle(QueueName.ApprovalDecisions, JobName.Decision, t.genuine());
    expectRefused('genuine approve after expiry', viaQueue === 'completed', 'ignored');
    expect(await restarts(t.service)).toBe(0);
  });

  it('keeps garbage and oversized messages on every queue in the failed set, naming what is wrong', async () => {
    const big = 'x'.repeat(2_000_000);
    const parked = await parkedTarget('hostile-queues');
    const perQueue: Record<string, string[]> = {
      [QueueName.AgentRuns]: [JobName.StartRun],
      [QueueName.ApprovalRequests]: [JobName.RequestApproval],
      [QueueName.ApprovalDecisions]: [JobName.Decision],
      [ApprovalServiceQueueName.Notifications]: [
        ApprovalServiceJobName.NotifySlack,
        ApprovalServiceJobName.NotifyEmail,
      ],
      // No timer queue: expiry and escalation are due timers in the approval state, not queue messages.
    };
    for (const [queue, names] of Object.entries(perQueue)) {
      const payloads: [string, string, unknown][] = [
        ...names.flatMap((name): [string, string, unknown][] => [
          [name, 'a string', 'garbage'],
          [name, 'null', null],
          [name, 'an array', [1, 2, 3]],
          [name, 'an empty object', {}],
          [name, 'wrong types', { callId: 42, runId: ['x'], attempt: 'first', decision: true }],
          [name, 'oversized', { callId: big, runId: big, args: { blob: big } }],
          [name, 'an ID with a colon', { callId: 'a:b', attempt: 0 }],
        ]),
        ['no.such.job', 'an unknown job name', { callId: 'x' }],
      ];
      for (const [name, what, data] of payloads) {
        const reason = await settle(queue, name, data);
        expectRefused(`${queue} ${name} ${what}`, reason !== 'completed', reason.slice(0, 200));
      }
    }
    // A start message replayed for a run that is parked: the run is not restarted from scratch.
    const replayedStart = await settle(QueueName.AgentRuns, JobName.StartRun, {
      runId: parked.runId,
      agent: 'ops',
      userId: 'alice',
      input: 'again',
      script: restartScript('hostile-queues'),
    });
    expectRefused(
      'run.start replayed for a parked run',
      replayedStart === 'completed' && (await system.run(parked.runId)).pending.length === 1,
      'skipped',
    );
    // An approval request whose fingerprint does not match what it shows is never shown to approvers.
    const lying = await settle(
      QueueName.ApprovalRequests,
      JobName.RequestApproval,
      {
        requestId: 'r-lying-request',
        callId: 'lying-request',
        runId: 'lying-run',
        agent: 'ops',
        requester: 'alice',
        toolName: 'restart_service',
        args: { service: 'api' },
        tier: 'confirm',
        fingerprint: parked.call.fingerprint,
        toolDefinitionHash: 'd'.repeat(64),
        requestedAt: new Date().toISOString(),
      },
      'lying-request',
    );
    expectRefused('approval request whose fingerprint lies', /fingerprint does not match/.test(lying), lying);
    // Well formed in every other field, but arguments past the bound: refused by name, never shown.
    const bloated = await settle(
      QueueName.ApprovalRequests,
      JobName.RequestApproval,
      {
        callId: 'bloated-request',
        runId: 'bloated-run',
        agent: 'ops',
        requester: 'alice',
        toolName: 'restart_service',
        args: { service: 'x'.repeat(70_000) },
        tier: 'confirm',
        fingerprint: 'e'.repeat(64),
        toolDefinitionHash: 'd'.repeat(64),
        requestedAt: new Date().toISOString(),
      },
      'bloated-request',
    );
    expectRefused(
      'approval request with oversized arguments',
      /args: must be at most 65536 bytes/.test(bloated),
      bloated,
    );
    for (const url of [system.workerUrl, system.approvalUrl])
      expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(await restarts('hostile-queues')).toBe(0);
  });

  it('answers malformed JSON and wrong types on every HTTP endpoint with a 4xx that says what is wrong', async () => {
    const t = await parkedTarget('hostile-http');
    const bob = { Authorization: `Bearer ${SYSTEM_APPROVERS.bob.apiToken}` };
    const json = { 'content-type': 'application/json' };
    const alice = { ...json, ...system.bearer('alice') };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const token = signLinkToken(
      {
        requestId: t.call.requestId!,
        callId: t.call.callId,
        attempt: 0,
        approver: 'bob',
        expiresAt: Date.now() + 60_000,
      },
      SYSTEM_SECRETS.LINK_TOKEN_SECRET,
    );
    const W = system.workerUrl;
    const A = system.approvalUrl;
    const cases: [string, string, RequestInit][] = [
      [
        'POST /runs malformed JSON',
        `${W}/runs`,
        { method: 'POST', headers: alice, body: '{"agent": "ops",' },
      ],
      [
        'POST /runs no token',
        `${W}/runs`,
        { method: 'POST', headers: json, body: JSON.stringify({ agent: 'ops', input: 'hi' }) },
      ],
      [
        'POST /runs userId in the body (requester forged)',
        `${W}/runs`,
        {
          method: 'POST',
          headers: alice,
          body: JSON.stringify({ agent: 'ops', userId: 'bob', input: 'hi' }),
        },
      ],
      [
        'POST /runs wrong types',
        `${W}/runs`,
        {
          method: 'POST',
          headers: alice,
          body: JSON.stringify({ agent: 5, onBehalfOf: ['alice'], input: {} }),
        },
      ],
      ['POST /runs array body', `${W}/runs`, { method: 'POST', headers: alice, body: '[]' }],
      [
        'POST /runs oversized',
        `${W}/runs`,
        {
          method: 'POST',
          headers: alice,
          body: JSON.stringify({ agent: 'ops', input: 'x'.repeat(3_000_000) }),
        },
      ],
      [
        'POST /runs unknown agent',
        `${W}/runs`,
        {
          method: 'POST',
          headers: alice,
          body: JSON.stringify({ agent: 'nobody', input: 'hi' }),
        },
      ],
      [
        'POST /runs script with a bad turn',
        `${W}/runs`,
        {
          method: 'POST',
          headers: alice,
          body: JSON.stringify({
            agent: 'ops',
            input: 'hi',
            script: [{ toolCalls: 'all' }],
          }),
        },
      ],
      ['GET /runs/:id bad ID', `${W}/runs/a:b`, { headers: alice }],
      ['GET /runs/:id unknown', `${W}/runs/no-such-run`, { headers: alice }],
      ['GET /runs/:id/events unknown', `${W}/runs/no-such-run/events`, { headers: alice }],
      ['GET /runs/:id of another requester', `${W}/runs/${t.runId}`, { headers: system.bearer('mallory') }],
      [
        'POST decisions malformed JSON',
        `${A}/approvals/${t.call.callId}/decisions`,
        { method: 'POST', headers: { ...bob, ...json }, body: '{"decision":' },
      ],
      [
        'POST decisions wrong type',
        `${A}/approvals/${t.call.callId}/decisions`,
        { method: 'POST', headers: { ...bob, ...json }, body: JSON.stringify({ decision: 'maybe' }) },
      ],
      [
        'POST decisions extra field',
        `${A}/approvals/${t.call.callId}/decisions`,
        {
          method: 'POST',
          headers: { ...bob, ...json },
          // (`args` is a field now: an approver's edited arguments.)
          body: JSON.stringify({ decision: 'approve', decidedBy: 'policy' }),
        },
      ],
      [
        'POST decisions edited args the tool does not take',
        `${A}/approvals/${t.call.callId}/decisions`,
        {
          method: 'POST',
          headers: { ...bob, ...json },
          body: JSON.stringify({ decision: 'approve', args: { service: 'api', force: true } }),
        },
      ],
      [
        'POST decisions edited args on a deny',
        `${A}/approvals/${t.call.callId}/decisions`,
        {
          method: 'POST',
          headers: { ...bob, ...json },
          body: JSON.stringify({ decision: 'deny', args: { service: 'api' } }),
        },
      ],
      [
        'POST decisions number body',
        `${A}/approvals/${t.call.callId}/decisions`,
        { method: 'POST', headers: { ...bob, ...json }, body: '42' },
      ],
      [
        'POST decisions oversized reason',
        `${A}/approvals/${t.call.callId}/decisions`,
        {
          method: 'POST',
          headers: { ...bob, ...json },
          body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(5_000) }),
        },
      ],
      [
        'POST decisions no token',
        `${A}/approvals/${t.call.callId}/decisions`,
        { method: 'POST', headers: json, body: JSON.stringify({ decision: 'approve' }) },
      ],
      [
        'POST decisions wrong token',
        `${A}/approvals/${t.call.callId}/decisions`,
        {
          method: 'POST',
          headers: { Authorization: 'Bearer nope', ...json },
          body: JSON.stringify({ decision: 'approve' }),
        },
      ],
      [
        'POST decisions bad call ID',
        `${A}/approvals/a:b/decisions`,
        { method: 'POST', headers: { ...bob, ...json }, body: JSON.stringify({ decision: 'approve' }) },
      ],
      [
        'POST decisions unknown call',
        `${A}/approvals/no-such-call/decisions`,
        { method: 'POST', headers: { ...bob, ...json }, body: JSON.stringify({ decision: 'approve' }) },
      ],
      ['GET /approvals bad status', `${A}/approvals?status=everything`, { headers: bob }],
      ['GET /approvals/:id bad ID', `${A}/approvals/a:b`, { headers: bob }],
      ['GET /audit bad limit', `${A}/audit?limit=lots`, { headers: bob }],
      [
        'POST /slack/interactions unsigned',
        `${A}/slack/interactions`,
        { method: 'POST', headers: form, body: 'payload=%7B' },
      ],
      [
        'POST /approve/:token malformed form',
        `${A}/approve/${token}`,
        { method: 'POST', headers: form, body: 'decision=maybe' },
      ],
      [
        'POST /approve/:token JSON wrong type',
        `${A}/approve/${token}`,
        { method: 'POST', headers: json, body: JSON.stringify({ decision: 1 }) },
      ],
      ['GET /approve/:token garbage', `${A}/approve/not-a-token`, {}],
      [
        'POST /inbox/session wrong type',
        `${A}/inbox/session`,
        { method: 'POST', headers: json, body: JSON.stringify({ token: 7 }) },
      ],
      [
        'POST /inbox/session malformed JSON',
        `${A}/inbox/session`,
        { method: 'POST', headers: json, body: '{"token"' },
      ],
      ['GET /inbox/items unauthenticated', `${A}/inbox/items`, {}],
    ];
    for (const [what, url, init] of cases) {
      const res = await fetch(url, init);
      const text = await res.text();
      expectRefused(what, res.status >= 400 && res.status < 500, `${res.status} ${text.slice(0, 120)}`);
    }
    expect(await restarts(t.service)).toBe(0);
    expect((await system.run(t.runId)).status).toBe('awaiting_confirmation');
  });

  it('refuses Slack interactions with bad signatures, stale timestamps and replayed bodies (audited)', async () => {
    const t = await parkedTarget('hostile-slack');
    const payload = (user: string) =>
      new URLSearchParams({
        payload: JSON.stringify({
          type: 'block_actions',
          user: { id: user },
          channel: { id: 'C-ops' },
          actions: [{ action_id: 'countersign_approve', value: `${t.call.callId}|0` }],
        }),
      }).toString();
    const post = async (body: string, timestamp: number, signature?: string) => {
      const ts = String(timestamp);
      const res = await fetch(`${system.approvalUrl}/slack/interactions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': ts,
          'x-slack-signature': signature ?? slackSignature(SYSTEM_SECRETS.SLACK_SIGNING_SECRET, ts, body),
        },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    const now = Math.floor(Date.now() / 1000);
    const body = payload(SYSTEM_APPROVERS.bob.slackUserId);
    const cases: [string, () => Promise<{ status: number; text: string }>, string][] = [
      [
        'bad signature',
        () => post(body, now, slackSignature('wrong-secret', String(now), body)),
        'bad_signature',
      ],
      [
        'signature of another body',
        () =>
          post(
            body,
            now,
            slackSignature(SYSTEM_SECRETS.SLACK_SIGNING_SECRET, String(now), payload('U_CAROL')),
          ),
        'bad_signature',
      ],
      ['stale timestamp (10 min)', () => post(body, now - 600), 'stale_timestamp'],
      ['timestamp from the future', () => post(body, now + 600), 'stale_timestamp'],
      ['no signature', () => post(body, now, ''), 'missing_signature'],
    ];
    for (const [what, send, reason] of cases) {
      const before = await unauthenticated('slack', reason);
      const res = await send();
      const counted = (await unauthenticated('slack', reason)) === before + 1;
      expectRefused(
        `Slack ${what}`,
        res.status === 401 && counted,
        `${res.status} ${res.text.slice(0, 100)}`,
      );
    }
    // A genuine click from someone Slack knows but Countersign does not.
    const stranger = await post(payload('U_STRANGER'), now);
    expectRefused(
      'Slack click by an unknown user',
      stranger.status === 200 && /unknown Slack user/.test(stranger.text),
      stranger.text,
    );
    // The same signed body twice: the replay is refused even though the click itself was valid... use a deny so the
    // genuine first click decides nothing that runs.
    const deny = new URLSearchParams({
      payload: JSON.stringify({
        type: 'block_actions',
        user: { id: 'U_NOBODY' },
        actions: [{ action_id: 'countersign_deny', value: `${t.call.callId}|0` }],
      }),
    }).toString();
    const ts = Math.floor(Date.now() / 1000);
    const signature = slackSignature(SYSTEM_SECRETS.SLACK_SIGNING_SECRET, String(ts), deny);
    await post(deny, ts, signature);
    const replays = await unauthenticated('slack', 'replay');
    const replay = await post(deny, ts, signature);
    const replayCounted = (await unauthenticated('slack', 'replay')) === replays + 1;
    expectRefused(
      'Slack replayed body',
      replay.status === 401 && replayCounted,
      `${replay.status} ${replay.text}`,
    );
    expect(await restarts(t.service)).toBe(0);
    expect((await system.run(t.runId)).status).toBe('awaiting_confirmation');
  });

  it('refuses email tokens that are tampered or expired (counted) or reused (audited), and a GET decides nothing', async () => {
    const t = await parkedTarget('hostile-mail');
    const { link } = await system.mailTo('bob', t.call.callId);
    const [base, token] = link.split('/approve/');
    const [body, mac] = token.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const retarget = (change: Record<string, unknown>) =>
      `${Buffer.from(JSON.stringify({ ...claims, ...change })).toString('base64url')}.${mac}`;
    const expired = signLinkToken(
      {
        requestId: t.call.requestId!,
        callId: t.call.callId,
        attempt: 0,
        approver: 'bob',
        expiresAt: Date.now() - 1_000,
      },
      SYSTEM_SECRETS.LINK_TOKEN_SECRET,
    );
    const decide = async (tok: string, decision = 'approve') => {
      const res = await fetch(`${base}/approve/${tok}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `decision=${decision}`,
      });
      return { status: res.status, text: await res.text() };
    };
    const cases: [string, string, number, string][] = [
      ['tampered approver', retarget({ p: 'carol' }), 400, 'link_bad_signature'],
      ['tampered call ID', retarget({ c: 'hostile-other' }), 400, 'link_bad_signature'],
      ['tampered request ID', retarget({ r: 'r-hostile-other' }), 400, 'link_bad_signature'],
      ['tampered expiry', retarget({ exp: Date.now() + 10 * 86_400_000 }), 400, 'link_bad_signature'],
      // 43 → 40 characters: still a canonical spelling (a whole number of base64 groups), so the MAC itself is refused.
      ['truncated signature', token.slice(0, -3), 400, 'link_bad_signature'],
      // Another spelling of the same token: what a lenient decoder would take for it (one spelling only).
      ['respelled token', token.replace('.', '.='), 400, 'link_malformed'],
      ['expired', expired, 410, 'link_expired'],
    ];
    for (const [what, tok, status, reason] of cases) {
      const before = await unauthenticated('email', reason);
      const res = await decide(tok);
      const counted = (await unauthenticated('email', reason)) === before + 1;
      expectRefused(`email token ${what}`, res.status === status && counted, `${res.status} ${reason}`);
    }
    const peek = await fetch(link);
    expectRefused(
      'GET of the email link decides nothing',
      peek.status === 200 && (await system.run(t.runId)).status === 'awaiting_confirmation',
      'confirmation page only',
    );
    expect(await restarts(t.service)).toBe(0);

    // The genuine link works once (this is the one execution), and its reuse is refused.
    expect((await decide(token)).status).toBe(200);
    await system.waitForStatus(t.runId, 'completed');
    const reuse = await decide(token, 'deny');
    const reuseAudited = await auditHas(
      (e) =>
        e.type === 'decision.rejected' &&
        e.callId === t.call.callId &&
        ['replayed_token', 'already_decided'].includes(String(e.detail.reason)),
    );
    expectRefused('email token reused', reuse.status === 409 && reuseAudited, `${reuse.status}`);
    expect(await restarts(t.service)).toBe(1);
  });

  it('ran nothing it should not have: every parked target still runs exactly once on a genuine decision', async () => {
    for (const t of targets) {
      const view = await system.run(t.runId);
      if (view.status === 'awaiting_confirmation') {
        const res = await system.api('POST', `/approvals/${t.callId}/decisions`, 'bob', {
          decision: 'approve',
        });
        expect(res.status).toBe(200);
      }
    }
    for (const t of targets) {
      const view = await system.waitForStatus(t.runId, 'completed', 20_000).catch(() => undefined);
      if (!view) tally.lostRun(`${t.runId} (${t.service}) did not complete`);
      const ran = await restarts(t.service);
      const expected = t.service.startsWith('expiring') ? 0 : 1;
      if (ran !== expected) tally.wronglyExecuted(`${t.service} ran ${ran}x, expected ${expected}`);
    }
    tally.completed = targets.length - tally.lost.length;
    tally.expectClean();
    expect(tally.refused).toBe(tally.tried);
  });
});

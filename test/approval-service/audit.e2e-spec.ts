// The audit log as the approval service keeps and serves it, end to end (real Redis, real HTTP): unauthenticated
// traffic is counted, never appended; a chain rewritten without the key fails /audit/verify; GET /audit shows each
// caller what was routed to them, a page at a time; retention trims behind a checkpoint that verifies.
import { createHash, createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import type { AuditEntry } from '@countersign/contracts';
import { AuditLog } from '@countersign/audit';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { AuditTrail } from '../../apps/approval-service/src/core/audit-trail';
import { slackSignature } from '../../apps/approval-service/src/channels/slack/slack-signature';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { testAuditKeyring } from '../support/audit';
import { FakeSlackApi } from '../support/fake-slack-api';
import { approvalsConfig, approvers, asApprover, group } from '../support/fixtures';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('audit-service');
const SLACK_SIGNING_SECRET = 'slack-signing-secret-for-audit-tests';
const APPROVALS = approvalsConfig({
  approvers: approvers('bob', 'carol', 'eve'),
  groups: [group('ops', ['bob', 'carol'], '#ops'), group('finance', ['eve'], '#finance')],
  rules: [{ match: { tool: 'pay_invoice' }, groups: ['finance'] }],
  defaults: { channels: ['web'] },
});
const stream = `{${prefixes.keyPrefix}:audit}:stream`;
const heads = `{${prefixes.keyPrefix}:audit}:heads`;

let service: RunningApprovalService;
let queues: AgentSideQueues;
let redis: Redis;
const slack = new FakeSlackApi();

beforeAll(async () => {
  const slackUrl = await slack.start();
  service = await startApprovalService(
    approvalServiceEnv(prefixes, APPROVALS, {
      SLACK_BOT_TOKEN: 'xoxb-audit-test',
      SLACK_SIGNING_SECRET,
      SLACK_API_URL: slackUrl,
    }),
    { port: 0, host: '127.0.0.1' },
  );
  queues = new AgentSideQueues(prefixes);
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await redis?.quit();
  await slack.stop();
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

/** As an approver of APPROVALS or a default test principal (auditor, mallory, ...), each with its test token. */
function headersOf(as: string): { Authorization: string } {
  return asApprover(as);
}

async function get<T = unknown>(path: string, as: string) {
  const res = await fetch(`${service.url}${path}`, { headers: headersOf(as) });
  const text = await res.text();
  return {
    status: res.status,
    link: res.headers.get('link'),
    json: (text ? JSON.parse(text) : undefined) as T,
  };
}

function slackBody(requestId: string, userId: string): string {
  const payload = {
    type: 'block_actions',
    user: { id: userId },
    channel: { id: 'C-ops' },
    actions: [{ action_id: 'countersign_approve', value: `${requestId}|0` }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

function postSlack(body: string, timestamp: string, signature: string) {
  return fetch(`${service.url}/slack/interactions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': signature,
    },
    body,
  });
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`, { headers: asApprover('scraper') })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** A request routed to ops, decided by bob through the API, with its audit trail complete. */
async function decidedByBob(): Promise<{ callId: string }> {
  const request = await queues.submit(approvalRequest({ requester: 'alice' }));
  await waitFor(
    async () => (await get(`/approvals/${request.callId}`, 'bob')).status === 200,
    'request stored',
  );
  const res = await fetch(`${service.url}/approvals/${request.callId}/decisions`, {
    method: 'POST',
    headers: { ...headersOf('bob'), 'Content-Type': 'application/json' },
    body: JSON.stringify({ decision: 'approve' }),
  });
  expect(res.status).toBe(200);
  await waitFor(
    async () =>
      (await rows()).some(
        ([, f]) => entryOf(f).type === 'decision.published' && entryOf(f).callId === request.callId,
      ),
    'decision.published audited',
  );
  return { callId: request.callId };
}

type Row = [string, string[]];
const rows = async () => (await redis.xrange(stream, '-', '+')) as Row[];
const field = (fields: string[], name: string) => fields[fields.indexOf(name) + 1];
const entryOf = (fields: string[]) => JSON.parse(field(fields, 'entry')) as Record<string, unknown>;

// ---- tests ---------------------------------------------------------------------------------------------

describe('unauthenticated traffic (finding 5)', () => {
  it('is counted and logged, never appended to the audit log, however much of it comes', async () => {
    const { callId } = await decidedByBob();
    const before = await redis.xlen(stream);
    const counts = async () => ({
      stale: await metric(
        'countersign_unauthenticated_requests_total',
        'channel="slack",reason="stale_timestamp"',
      ),
      forged: await metric(
        'countersign_unauthenticated_requests_total',
        'channel="slack",reason="bad_signature"',
      ),
      link: await metric(
        'countersign_unauthenticated_requests_total',
        'channel="email",reason="link_malformed"',
      ),
    });
    const counted = await counts();
    // The attacker's text: an 8 KB timestamp header (not a timestamp, so refused as stale), a forged signature, a
    // 2 KB link token.
    const hugeTimestamp = '9'.repeat(8_000);
    const now = String(Math.floor(Date.now() / 1000));
    const junk = [
      ...Array.from({ length: 20 }, () => postSlack(slackBody(callId, 'U_BOB'), hugeTimestamp, 'v0=forged')),
      ...Array.from({ length: 10 }, () => postSlack(slackBody(callId, 'U_BOB'), now, `v0=${'0'.repeat(64)}`)),
      ...Array.from({ length: 20 }, () =>
        fetch(`${service.url}/approve/${'x'.repeat(2_000)}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'decision=approve',
        }),
      ),
    ];
    const statuses = (await Promise.all(junk)).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(30);
    expect(statuses.filter((s) => s === 400)).toHaveLength(20);

    expect(await redis.xlen(stream)).toBe(before);
    expect(await counts()).toEqual({
      stale: counted.stale + 20,
      forged: counted.forged + 10,
      link: counted.link + 20,
    });
  });

  it('still audits a refusal of someone Slack vouches for (a Slack user who is no approver)', async () => {
    const request = await queues.submit(approvalRequest({ requester: 'alice' }));
    await waitFor(
      async () => (await get(`/approvals/${request.callId}`, 'bob')).status === 200,
      'request stored',
    );
    const body = slackBody(request.requestId, 'U_STRANGER');
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await postSlack(body, timestamp, slackSignature(SLACK_SIGNING_SECRET, timestamp, body));
    expect(res.status).toBe(200);
    const rejected = (await rows()).map(([, f]) => entryOf(f)).filter((e) => e.callId === request.callId);
    expect(rejected).toContainEqual(
      expect.objectContaining({ type: 'decision.rejected', actor: 'slack:U_STRANGER' }),
    );
  });
});

describe('the keyed chain (finding 7)', () => {
  /** How an attacker with write access to Redis, but without AUDIT_SIGNING_SECRET, recomputes a chain link. */
  const attackers: [string, (chain: string, prev: string, entry: string) => string][] = [
    [
      'SHA-256 over the previous hash and the entry (the unkeyed formula)',
      (_chain, prev, entry) => createHash('sha256').update(prev).update('\n').update(entry).digest('hex'),
    ],
    [
      'HMAC-SHA256 under a guessed secret',
      (chain, prev, entry) =>
        createHmac('sha256', 'a-guessed-audit-signing-secret-0123456789')
          .update(`${chain}\n${prev}\n${entry}`)
          .digest('hex'),
    ],
  ];

  it.each(attackers)(
    "detects bob's decision removed and the rest of its chain re-added with %s",
    async (_how, recompute) => {
      const { callId } = await decidedByBob();
      const all = await rows();
      const victim = all.find(
        ([, f]) => entryOf(f).type === 'decision.recorded' && entryOf(f).callId === callId,
      )!;
      expect(entryOf(victim[1])).toMatchObject({ actor: 'bob' });
      const chain = field(victim[1], 'chain');

      // The rewrite: the victim's chain without the victim, every later link recomputed, the head moved along.
      let prev = '';
      let rewrittenNext: string | undefined;
      const rewritten: Row[] = [];
      for (const [id, fields] of all) {
        if (id === victim[0]) continue;
        if (field(fields, 'chain') !== chain) {
          rewritten.push([id, fields]);
          continue;
        }
        if (id > victim[0]) {
          rewrittenNext ??= id;
          const hash = recompute(chain, prev, field(fields, 'entry'));
          rewritten.push([id, ['chain', chain, 'entry', field(fields, 'entry'), 'hash', hash]]);
          prev = hash;
        } else {
          rewritten.push([id, fields]);
          prev = field(fields, 'hash');
        }
      }
      const tx = redis.multi().del(stream);
      for (const [id, fields] of rewritten) tx.xadd(stream, id, ...fields);
      await tx.hset(heads, chain, prev).exec();

      const check = await get<{ intact: boolean; brokenAt?: { id: string } }>('/audit/verify', 'auditor');
      expect(check.status).toBe(200);
      expect(check.json).toMatchObject({ intact: false, brokenAt: { id: rewrittenNext } });

      // Put the honest chain back for the tests after this one.
      const restore = redis.multi().del(stream);
      for (const [id, fields] of all) restore.xadd(stream, id, ...fields);
      await restore
        .hset(heads, chain, field(all.filter(([, f]) => field(f, 'chain') === chain).at(-1)![1], 'hash'))
        .exec();
    },
  );
});

describe('GET /audit', () => {
  /** Two requests, one routed to ops (bob, carol), one to finance (eve), and what an agent worker writes beside them. */
  async function routedTwoWays() {
    const ops = await queues.submit(approvalRequest({ toolName: 'restart_service' }));
    const finance = await queues.submit(
      approvalRequest({ toolName: 'pay_invoice', args: { invoice: 'INV-1' } }),
    );
    for (const [request, as] of [
      [ops, 'bob'],
      [finance, 'eve'],
    ] as const)
      await waitFor(
        async () => (await get(`/approvals/${request.callId}`, as)).status === 200,
        'request stored',
      );
    // An agent worker's entries: one of a run only, one of no request at all.
    const worker = new AuditLog(redis, prefixes.keyPrefix, 'agent-worker', testAuditKeyring());
    await worker.append({ type: 'run.parked', runId: ops.runId, detail: { pending: [ops.callId] } });
    await worker.append({ type: 'run.parked', runId: finance.runId, detail: { pending: [finance.callId] } });
    const unrelated = await worker.append({ type: 'run.started', runId: 'run-of-no-request' });
    return { ops, finance, unrelated };
  }

  const ids = (entries: AuditEntry[]) => entries.map((e) => e.id);

  it('shows a caller only the entries of requests routed to their groups, and of the runs those came from', async () => {
    const { ops, finance, unrelated } = await routedTwoWays();
    const asBob = (await get<AuditEntry[]>('/audit', 'bob')).json;
    expect(asBob.some((e) => e.callId === ops.callId && e.type === 'request.created')).toBe(true);
    expect(asBob.some((e) => e.runId === ops.runId && e.type === 'run.parked')).toBe(true);
    expect(asBob.some((e) => e.callId === finance.callId || e.runId === finance.runId)).toBe(false);
    expect(ids(asBob)).not.toContain(unrelated);

    const asEve = (await get<AuditEntry[]>('/audit', 'eve')).json;
    expect(asEve.some((e) => e.callId === finance.callId)).toBe(true);
    expect(asEve.some((e) => e.runId === finance.runId && e.type === 'run.parked')).toBe(true);
    expect(asEve.some((e) => e.callId === ops.callId || e.runId === ops.runId)).toBe(false);

    // Asking for a call by its ID does not get round the groups.
    expect((await get<AuditEntry[]>(`/audit?callId=${ops.callId}`, 'eve')).json).toEqual([]);
    // Someone in no group sees nothing (and the service reads nothing for them).
    expect(await get('/audit', 'mallory')).toMatchObject({ status: 200, json: [], link: null });

    const asAuditor = (await get<AuditEntry[]>('/audit', 'auditor')).json;
    expect(ids(asAuditor)).toEqual(expect.arrayContaining([...ids(asBob), ...ids(asEve), unrelated]));
  });

  it('pages newest first with a Link to older entries, each page oldest first, and refuses a bad cursor', async () => {
    await routedTwoWays();
    const whole = (await get<AuditEntry[]>('/audit', 'auditor')).json;
    expect(whole.length).toBeGreaterThan(6);
    const pages: AuditEntry[][] = [];
    for (let path: string | undefined = '/audit?limit=3'; path && pages.length < 100;) {
      const page: { status: number; link: string | null; json: AuditEntry[] } = await get<AuditEntry[]>(
        path,
        'auditor',
      );
      expect(page.status).toBe(200);
      pages.push(page.json);
      path = page.link ? /^<(\/audit\?[^>]+)>; rel="next"$/.exec(page.link)?.[1] : undefined;
      if (page.link) expect(path).toContain('limit=3');
    }
    expect(pages[0]).toHaveLength(3);
    expect(ids(pages.reverse().flat())).toEqual(ids(whole));

    const bad = await get<{ message: string }>('/audit?cursor=yesterday', 'auditor');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('cursor');
  });

  it('verifies for audit readers only', async () => {
    expect((await get('/audit/verify', 'bob')).status).toBe(403);
    expect((await get('/audit/verify', 'mallory')).status).toBe(403);
    expect((await fetch(`${service.url}/audit/verify`)).status).toBe(401);
    const check = await get<{ intact: boolean; keys: string[] }>('/audit/verify', 'auditor');
    expect(check).toMatchObject({
      status: 200,
      json: { intact: true, keys: [testAuditKeyring().current.id] },
    });
  });
});

// Last: it trims this file's log.
describe('retention', () => {
  async function redisMs(): Promise<number> {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  it('runs on the timer sweep, and trims past AUDIT_RETENTION behind a checkpoint that keeps /audit/verify intact', async () => {
    // The sweep trims once at start-up, and each minute after.
    await waitFor(
      async () => (await metric('countersign_audit_retention_runs_total', 'result="trimmed"')) >= 1,
      'a retention run',
    );
    const old = await redis.xlen(stream);
    const lastOld = (await redis.xrevrange(stream, '+', '-', 'COUNT', 1))[0][0];
    const cutoff = Number(lastOld.split('-')[0]) + 1;
    while ((await redisMs()) <= cutoff);
    const { callId } = await decidedByBob();

    const result = await service.app.get(AuditTrail).trim(cutoff + 90 * 86_400_000);
    expect(result).toEqual({ status: 'trimmed', trimmed: old, more: false });
    const check = await get<Record<string, unknown>>('/audit/verify', 'auditor');
    expect(check.json).toMatchObject({
      intact: true,
      entries: await redis.xlen(stream),
      checkpoint: { upTo: lastOld, trimmed: old },
    });
    // The service's chain goes on from the checkpoint.
    const page = (await get<AuditEntry[]>(`/audit?callId=${callId}`, 'bob')).json;
    expect(page[0].prevHash).toMatch(/^[0-9a-f]{64}$/);
    await decidedByBob();
    expect((await get('/audit/verify', 'auditor')).json).toMatchObject({ intact: true });
  });
});

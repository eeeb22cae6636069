// The approval state in three shards (APPROVAL_SHARDS=3), against real Redis and a listening service: each request
// lives whole in the shard of its request ID, and what spans requests (trust counters, standing rules, expiry
// sweeps, a call ID's requests) works across the shards as it does in one. The list walks with three shards are in
// approval-list-paging.e2e-spec.ts.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ApprovalRequest, StandingRule } from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { DecisionStore } from '../../apps/approval-service/src/decisions/decision-store';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { StandingRuleStore } from '../../apps/approval-service/src/standing-rules/standing-rule-store';
import { approvalRequest, AgentSideQueues, approvalServiceEnv, callAs } from '../support/approval-harness';
import { approvalsConfig, asApprover } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const SHARDS = 3;
const prefixes = uniquePrefixes('approval-shards');
const APPROVALS = approvalsConfig({
  rules: [{ name: 'short-lived', match: { tool: 'short_lived' }, groups: ['ops'], expiresIn: '1s' }],
  defaults: { channels: ['web'] },
});

let service: RunningApprovalService;
let queues: AgentSideQueues;
let redis: Redis;

beforeAll(async () => {
  service = await startApprovalService(
    approvalServiceEnv(prefixes, APPROVALS, { APPROVAL_SHARDS: String(SHARDS), TIMER_SWEEP_MS: '50' }),
    { port: 0, host: '127.0.0.1' },
  );
  queues = new AgentSideQueues(prefixes);
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await redis?.quit();
  await deletePrefixedKeys(prefixes);
});

// ---- helpers -------------------------------------------------------------------------------------------

const store = () => service.app.get(RequestStore);
const keys = () => store().keys;

/** A request whose request ID lies in `shard` (request IDs are `rq-<call ID>`, see approvalRequest). */
function requestIn(shard: number, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  for (;;) {
    const callId = `call-${randomBytes(5).toString('hex')}`;
    if (keys().shardOf(`rq-${callId}`).index === shard) return approvalRequest({ callId, ...over });
  }
}

const api = (method: string, path: string, as: string, body?: unknown) =>
  callAs(service.url, testToken(as), method, path, body);

/** Submits a request and waits until the service has stored it. */
async function submit(request: ApprovalRequest): Promise<ApprovalRequest> {
  await queues.submit(request);
  await waitFor(
    async () => (await store().get(request.requestId)) !== undefined,
    `${request.requestId} stored`,
  );
  return request;
}

const decide = (request: ApprovalRequest, decision: 'approve' | 'deny', as = 'bob') =>
  api('POST', `/approvals/${request.requestId}/decisions`, as, { decision });

/** The shards whose hash of this request exists. */
async function shardsHolding(requestId: string): Promise<number[]> {
  const held: number[] = [];
  for (const shard of keys().shards)
    if ((await redis.exists(shard.request(requestId))) === 1) held.push(shard.index);
  return held;
}

const rule = (over: Partial<StandingRule> = {}): StandingRule => ({
  id: `sr-${randomBytes(6).toString('hex')}`,
  tool: 'rule_covered',
  requester: 'alice',
  createdBy: 'carol',
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  ...over,
});

// ---- tests ---------------------------------------------------------------------------------------------

it('uses three hash tags that Redis Cluster places on three different thirds of its slots', () => {
  const tags = keys().shards.map((shard) => shard.tag);
  expect(new Set(tags).size).toBe(SHARDS);
  for (const tag of tags) expect(tag).toMatch(new RegExp(`^\\{${prefixes.keyPrefix}:approvals:s\\d`));
  // The home tag (trust, rules, digests) is the one-shard tag, unchanged.
  expect(keys().trust).toBe(`{${prefixes.keyPrefix}:approvals}:trust`);
});

it('keeps each request whole in the shard of its request ID, and decides it there', async () => {
  const requests: ApprovalRequest[] = [];
  for (let shard = 0; shard < SHARDS; shard++) requests.push(await submit(requestIn(shard)));
  for (const [shard, request] of requests.entries()) {
    const keysOf = keys().shards[shard];
    expect(await shardsHolding(request.requestId)).toEqual([shard]);
    expect(await redis.zscore(keysOf.pending, request.requestId)).not.toBeNull();
    expect(await redis.zscore(keysOf.timers, `expire|${request.requestId}|0`)).not.toBeNull();
    expect(await redis.smembers(keysOf.callRequests(request.callId))).toEqual([request.requestId]);
  }
  // One list for the caller, in creation order, whichever shard each came from.
  const listed = await api('GET', '/approvals?status=pending', 'bob');
  const ids = (listed.json as { request: ApprovalRequest }[]).map((v) => v.request.requestId);
  expect(ids.filter((id) => requests.some((r) => r.requestId === id))).toEqual(
    requests.map((r) => r.requestId),
  );

  for (const request of requests) {
    expect(
      (await api('POST', `/approvals/${request.callId}/decisions`, 'carol', { decision: 'approve' })).status,
    ).toBe(200);
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      requestId: request.requestId,
      decision: 'approve',
      decidedBy: 'person',
    });
    const keysOf = keys().shardOf(request.requestId);
    expect(await redis.zscore(keysOf.pending, request.requestId)).toBeNull();
    expect(await redis.zscore(keysOf.decided, request.requestId)).not.toBeNull();
  }
});

it('counts approvals in a row of one tool for one requester across every shard, and starts over on a deny', async () => {
  const ask = (shard: number) =>
    requestIn(shard, { toolName: 'trusted_tool', args: { n: shard }, requester: 'ivy' });
  for (const shard of [0, 1, 2, 0, 1]) {
    const request = await submit(ask(shard));
    expect((await decide(request, 'approve')).status).toBe(200);
  }
  const sixth = await submit(ask(2));
  const view = await api('GET', `/approvals/${sixth.requestId}`, 'bob');
  expect(view.json.trustSuggestion).toContain('5 approvals in a row of trusted_tool for ivy');

  expect((await decide(sixth, 'deny')).status).toBe(200);
  const next = await submit(ask(0));
  expect((await api('GET', `/approvals/${next.requestId}`, 'bob')).json.trustSuggestion).toBeUndefined();
});

it('runs the expiry timers of every shard', async () => {
  const requests: ApprovalRequest[] = [];
  for (let shard = 0; shard < SHARDS; shard++)
    requests.push(await submit(requestIn(shard, { toolName: 'short_lived' })));
  for (const request of requests)
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'deny',
      decidedBy: 'expired',
    });
  for (const request of requests)
    expect(await redis.zscore(keys().shardOf(request.requestId).expired, request.requestId)).not.toBeNull();
});

it('lets a standing rule decide in every shard, and in none once it is revoked; a shard lacking its copy asks people', async () => {
  const rules = service.app.get(StandingRuleStore);
  const covered = (shard: number) => requestIn(shard, { toolName: 'rule_covered', args: { shard } });
  const added = rule();
  await rules.add(added);
  for (const shard of keys().shards) expect(await redis.hget(shard.standingRules, added.id)).not.toBeNull();

  for (let shard = 0; shard < SHARDS; shard++) {
    const request = await submit(covered(shard));
    expect(await queues.waitForDecision(request.callId)).toMatchObject({
      decision: 'approve',
      decidedBy: 'policy',
    });
  }

  // A shard whose copy lacks the rule (say, the shard count grew since it was added) sends the request to people...
  await redis.hdel(keys().shards[1].standingRules, added.id);
  const uncovered = await submit(covered(1));
  expect((await store().get(uncovered.requestId))?.status).toBe('pending');
  // ... until the copies are brought in line with the rules people see (done at every start).
  expect(await rules.syncCopies()).toBe(1);
  const coveredAgain = await submit(covered(1));
  expect(await queues.waitForDecision(coveredAgain.callId)).toMatchObject({ decidedBy: 'policy' });

  expect(await rules.revoke(added.id)).toMatchObject({ id: added.id });
  for (const shard of keys().shards) expect(await redis.hget(shard.standingRules, added.id)).toBeNull();
  for (let shard = 0; shard < SHARDS; shard++) {
    const request = await submit(covered(shard));
    expect((await store().get(request.requestId))?.status).toBe('pending');
  }
});

it('finds the requests of one call ID in every shard', async () => {
  // Two runs that chose the same call ID; their request IDs lie in different shards.
  const callId = `shared-${randomBytes(4).toString('hex')}`;
  const inShard = (shard: number) => {
    for (;;) {
      const requestId = `rq-${randomBytes(5).toString('hex')}`;
      if (keys().shardOf(requestId).index === shard) return requestId;
    }
  };
  const first = await submit(approvalRequest({ callId, requestId: inShard(0) }));
  const second = await submit(approvalRequest({ callId, requestId: inShard(2) }));
  const found = await store().requestsOfCall(callId);
  expect(found.map((a) => a.request.requestId).sort()).toEqual([first.requestId, second.requestId].sort());
  // Both open, from two runs: the call ID names neither.
  expect((await api('GET', `/approvals/${callId}`, 'bob')).status).toBe(409);
  expect((await decide(second, 'approve')).status).toBe(200);
  // One open now: the call ID names it.
  expect((await api('GET', `/approvals/${callId}`, 'bob')).json.request.requestId).toBe(first.requestId);
});

it('refuses to start with another shard count while the old shards hold an open request, and starts once it is settled', async () => {
  const own = uniquePrefixes('approval-shards-count');
  const ownQueues = new AgentSideQueues(own);
  const start = (count: number) =>
    startApprovalService(approvalServiceEnv(own, APPROVALS, { APPROVAL_SHARDS: String(count) }), {
      port: 0,
      host: '127.0.0.1',
    });
  try {
    let one = await start(1);
    const request = approvalRequest();
    await ownQueues.submit(request);
    await waitFor(
      async () => (await one.app.get(RequestStore).get(request.requestId)) !== undefined,
      'stored',
    );
    await one.close();

    await expect(start(3)).rejects.toThrow(
      'APPROVAL_SHARDS is 3, but the approval state was stored in 1 shard(s) and still holds 2 open request(s) or ' +
        'timer(s) there: start with APPROVAL_SHARDS=1 until they are settled',
    );

    one = await start(1);
    const res = await fetch(`${one.url}/approvals/${request.requestId}/decisions`, {
      method: 'POST',
      headers: { ...asApprover('bob'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(res.status).toBe(200);
    // Settled and published: its publish check leaves the timers too.
    const [oldShard] = one.app.get(RequestStore).keys.shards;
    await waitFor(async () => (await redis.zcard(oldShard.timers)) === 0, 'publish check removed');
    await one.close();

    const three = await start(3);
    expect(three.app.get(RequestStore).keys.shards).toHaveLength(3);
    expect(await redis.get(three.app.get(RequestStore).keys.shardCount)).toBe('3');
    await three.close();
  } finally {
    await ownQueues.close();
    await deletePrefixedKeys(own);
  }
});

it('counts trust in the order of the decisions, not of their updates', async () => {
  const request = approvalRequest({ toolName: 'ordered_tool', requester: 'jay' });
  const at = (ms: number, decision: 'approve' | 'deny') =>
    service.app.get(DecisionStore).countTrust(request, {
      decision,
      decidedBy: 'person',
      approvers: ['bob'],
      decidedAt: new Date(ms).toISOString(),
    });
  const count = async () => Number(await redis.hget(keys().trust, 'jay|ordered_tool'));
  await at(1_000, 'approve');
  await at(2_000, 'approve');
  expect(await count()).toBe(2);
  // A deny decided at 4 s lands before an approve decided at 3 s: the approve is older, and changes nothing.
  await at(4_000, 'deny');
  await at(3_000, 'approve');
  expect(await count()).toBe(0);
  await at(5_000, 'approve');
  expect(await count()).toBe(1);
});

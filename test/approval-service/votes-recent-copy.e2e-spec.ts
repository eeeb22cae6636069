// A vote on the REST API is checked on the copy of the request this process kept when it stored or read it
// (RecentRequests, issue 27): no read of the request before the vote script. The copy is a hint only: when the
// request moved on behind this process (another replica's vote, edit, reroute or decision), every refusal is answered
// and audited exactly as when the vote is checked on the request read anew. Real Redis, real HTTP.
import { randomBytes } from 'node:crypto';
import { fingerprint } from '@countersign/authorization';
import type { ApprovalRequest } from '@countersign/contracts';
import { ToolCatalog } from '@countersign/shared-records';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { RecentRequests } from '../../apps/approval-service/src/requests/recent-requests';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { VoteStore, type CheckedVote } from '../../apps/approval-service/src/votes/vote-store';
import { countTrips, monitorCommands } from '../../bench/support/trips';
import { approvalRequest, AgentSideQueues, approvalServiceEnv, callAs } from '../support/approval-harness';
import { approvalsConfig, approver, group, PAYMENTS_NEED_TWO } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('recent-copy');
const APPROVALS = approvalsConfig({
  approvers: [approver('bob'), approver('carol'), approver('dave')],
  groups: [group('ops', ['bob', 'carol']), group('finance', ['carol', 'dave'])],
  rules: [
    PAYMENTS_NEED_TWO,
    { name: 'web and api', match: { args: { service: ['web', 'api'] } }, groups: ['ops'] },
  ],
  defaultGroup: undefined,
  defaults: { channels: ['web'] },
});
const SCALE_HASH = 'a'.repeat(64);
const SCALE_SCHEMA = {
  type: 'object',
  properties: { service: { type: 'string' }, replicas: { type: 'integer', minimum: 0, maximum: 20 } },
  required: ['service', 'replicas'],
  additionalProperties: false,
};

let service: RunningApprovalService;
let queues: AgentSideQueues;

beforeAll(async () => {
  service = await startApprovalService(approvalServiceEnv(prefixes, APPROVALS), {
    port: 0,
    host: '127.0.0.1',
  });
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
  ]);
});

afterAll(async () => {
  await service?.close();
  await queues?.close();
  await deletePrefixedKeys(prefixes);
});

const api = (method: string, path: string, as: string, body?: unknown) =>
  callAs(service.url, testToken(as), method, path, body);
const decide = (id: string, as: string, body: Record<string, unknown>) =>
  api('POST', `/approvals/${id}/decisions`, as, body);

/** alice's scale_service call, taken in by this service (which keeps its copy). */
async function scale(args: Record<string, unknown>): Promise<ApprovalRequest> {
  const request = await queues.submit(
    approvalRequest({ toolName: 'scale_service', toolDefinitionHash: SCALE_HASH, args }),
  );
  await waitFor(
    async () => (await service.app.get(RequestStore).get(request.requestId)) !== undefined,
    `${request.requestId} stored`,
  );
  return request;
}

/** A vote written by the store alone, as another replica writes it: this service's copy does not hear of it. */
async function elsewhere(
  request: ApprovalRequest,
  vote: Partial<CheckedVote> & Pick<CheckedVote, 'approver'>,
) {
  const now = (await service.app.get(RequestStore).get(request.requestId))!;
  return service.app.get(VoteStore).recordVote({
    requestId: request.requestId,
    decision: 'approve',
    channel: 'api',
    checked: { rev: now.edited?.rev ?? 0, routeVersion: now.routeVersion },
    counts: true,
    ...vote,
  });
}

async function rejections(callId: string) {
  const { json } = await api('GET', `/audit?callId=${callId}`, 'auditor');
  return (json as { type: string; actor?: string; detail: Record<string, unknown> }[])
    .filter((e) => e.type === 'decision.rejected')
    .map((e) => ({ actor: e.actor, detail: e.detail }));
}

/** `value` with the IDs of `from` written as those of `to`, to compare what two requests answered. */
function renamed<T>(value: T, from: ApprovalRequest, to: ApprovalRequest): T {
  let text = JSON.stringify(value);
  for (const key of ['requestId', 'callId', 'runId'] as const) text = text.split(from[key]).join(to[key]);
  return JSON.parse(text) as T;
}

it('decides on the copy intake kept, without reading the request before the vote', async () => {
  const request = await scale({ service: 'web', replicas: 2 });
  expect(service.app.get(RecentRequests).get(request.requestId)).toBeDefined();
  const monitored = await monitorCommands(TEST_REDIS_URL);
  const startUs = Date.now() * 1000;
  let answer: Awaited<ReturnType<typeof decide>>;
  try {
    answer = await decide(request.requestId, 'bob', { decision: 'approve' });
    await new Promise((done) => setTimeout(done, 100));
  } finally {
    monitored.stop();
  }
  expect(answer).toMatchObject({ status: 200, json: { status: 'decided', approvers: ['bob'] } });
  const hash = `${prefixes.keyPrefix}:approvals}:request:${request.requestId}`;
  const onRequest = monitored.seen.filter((s) => s.client !== 'lua' && s.args.some((a) => a.endsWith(hash)));
  // The vote script is the first command on the request's hash: no HGETALL before it.
  expect(onRequest[0]).toMatchObject({ command: 'evalsha' });
  expect(onRequest.filter((s) => s.command === 'hgetall')).toEqual([]);
  expect(countTrips(onRequest, startUs, Date.now() * 1000).trips).toBeGreaterThanOrEqual(1);
  expect(await queues.waitForDecision(request.callId)).toMatchObject({
    decision: 'approve',
    approvers: ['bob'],
  });
  expect(service.app.get(RecentRequests).get(request.requestId)).toBeUndefined();
});

describe('a copy the request moved on from behind this service', () => {
  /**
   * Two requests brought to the same state by `moveOn` behind this service's back: the first voted on with its stale
   * copy, the second with none (read anew). Same answer, same audit of the refusal.
   */
  async function sameAsReadAnew(
    args: Record<string, unknown>,
    moveOn: (request: ApprovalRequest) => Promise<unknown>,
    vote: { as: string; body: (request: ApprovalRequest) => Record<string, unknown> },
  ) {
    const [stale, fresh] = [await scale(args), await scale(args)];
    await moveOn(stale);
    await moveOn(fresh);
    const recent = service.app.get(RecentRequests);
    expect(recent.get(stale.requestId)?.routeVersion).toBe(0);
    recent.forget(fresh.requestId);
    const answered = await decide(stale.requestId, vote.as, vote.body(stale));
    const reference = await decide(fresh.requestId, vote.as, vote.body(fresh));
    expect(answered).toEqual(renamed(reference, fresh, stale));
    expect(await rejections(stale.callId)).toEqual(renamed(await rejections(fresh.callId), fresh, stale));
    return answered;
  }

  const approve = () => ({ decision: 'approve' });
  /** carol's or dave's edit to `args`, routed by the payments rule (anew when `rerouted`). */
  const paymentsEdit = (args: Record<string, unknown>, rerouted: boolean) => ({
    args,
    fingerprint: fingerprint('scale_service', args),
    route: { rule: PAYMENTS_NEED_TWO.name, why: 'payments', groups: ['finance'], quorum: 2 },
    rerouted,
  });

  it('routed anew to groups the caller is not in: 404 like an unknown request, the probe audited once', async () => {
    const edited = { service: 'payments', replicas: 1 };
    const answer = await sameAsReadAnew(
      { service: 'web', replicas: 3 },
      (request) =>
        elsewhere(request, {
          approver: 'carol',
          edit: paymentsEdit(edited, true),
        }),
      { as: 'bob', body: approve },
    );
    expect(answer.status).toBe(404);
  });

  it('decided elsewhere: already decided, audited once', async () => {
    const answer = await sameAsReadAnew(
      { service: 'web', replicas: 3 },
      (request) => elsewhere(request, { approver: 'carol', decision: 'deny' }),
      { as: 'bob', body: approve },
    );
    expect(answer).toMatchObject({ status: 409, json: { error: 'already_decided' } });
  });

  it('voted on elsewhere by the same approver: already voted, audited once', async () => {
    const answer = await sameAsReadAnew(
      { service: 'payments', replicas: 3 },
      (request) => elsewhere(request, { approver: 'dave' }),
      { as: 'dave', body: approve },
    );
    expect(answer).toMatchObject({ status: 409, json: { error: 'already_voted' } });
  });

  it('edited elsewhere since the approver looked: arguments edited, audited once', async () => {
    const edited = { service: 'payments-eu', replicas: 2 };
    const answer = await sameAsReadAnew(
      { service: 'payments', replicas: 3 },
      (request) =>
        elsewhere(request, {
          approver: 'dave',
          edit: paymentsEdit(edited, false),
        }),
      {
        as: 'carol',
        body: (request) => ({ decision: 'approve', fingerprint: request.fingerprint }),
      },
    );
    expect(answer.status).toBe(409);
  });

  it('edited elsewhere, voted on without a fingerprint: counted on the current revision, as when read anew', async () => {
    const edited = { service: 'payments-us', replicas: 2 };
    const moved = (request: ApprovalRequest) =>
      elsewhere(request, {
        approver: 'dave',
        edit: {
          args: edited,
          fingerprint: fingerprint('scale_service', edited),
          route: { rule: PAYMENTS_NEED_TWO.name, why: 'payments', groups: ['finance'], quorum: 2 },
          rerouted: false,
        },
      });
    const answer = await sameAsReadAnew({ service: 'payments', replicas: 3 }, moved, {
      as: 'carol',
      body: approve,
    });
    expect(answer).toMatchObject({ status: 200, json: { status: 'decided', approvers: ['dave', 'carol'] } });
  });
});

it('keeps no copy of a request it did not store or read, nor of one it read settled', async () => {
  const recent = service.app.get(RecentRequests);
  expect(recent.get(`rq-unknown-${randomBytes(4).toString('hex')}`)).toBeUndefined();
  const request = await scale({ service: 'web', replicas: 1 });
  await decide(request.requestId, 'carol', { decision: 'deny' });
  expect(recent.get(request.requestId)).toBeUndefined();
  expect((await api('GET', `/approvals/${request.requestId}`, 'bob')).status).toBe(200);
  expect(recent.get(request.requestId)).toBeUndefined();
});

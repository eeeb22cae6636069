// Live updates (GET /inbox/events) carry the request's call ID and groups as the change announced them (issue 27):
// intake's script and a person's deciding vote announce them, so no replica reads them back per change; a change
// announced without them (an expiry, an edit that routed the request anew) is still told, read back once. Each inbox
// hears only what is routed to it. Real Redis, real HTTP, the approval service's own SSE stream.
import { openEventStream } from '../../bench/support/http';
import { monitorCommands } from '../../bench/support/trips';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { LiveUpdates } from '../../apps/approval-service/src/requests/live-updates';
import { approvalRequest, AgentSideQueues, approvalServiceEnv, callAs } from '../support/approval-harness';
import { approvalsConfig, approver, group } from '../support/fixtures';
import { testToken } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('live-updates');
const APPROVALS = approvalsConfig({
  approvers: [approver('bob'), approver('carol'), approver('dave')],
  groups: [group('ops', ['bob', 'carol']), group('finance', ['dave'])],
  rules: [{ name: 'web', match: { args: { service: ['web'] } }, groups: ['ops'] }],
  defaultGroup: undefined,
  defaults: { channels: ['web'] },
});

interface Heard {
  requestId: string;
  callId: string;
  status: string;
}

let service: RunningApprovalService;
let queues: AgentSideQueues;
const heard: Record<'bob' | 'dave', Heard[]> = { bob: [], dave: [] };
const streams: { close(): void }[] = [];

beforeAll(async () => {
  service = await startApprovalService(approvalServiceEnv(prefixes, APPROVALS), {
    port: 0,
    host: '127.0.0.1',
  });
  queues = new AgentSideQueues(prefixes);
  for (const who of ['bob', 'dave'] as const)
    streams.push(
      await openEventStream(
        `${service.url}/inbox/events`,
        { authorization: `Bearer ${testToken(who)}` },
        (event, data) => {
          if (event === 'change') heard[who].push(JSON.parse(data) as Heard);
        },
      ),
    );
});

afterAll(async () => {
  for (const stream of streams) stream.close();
  await service?.close();
  await queues?.close();
  await deletePrefixedKeys(prefixes);
});

const heardOf = (who: 'bob' | 'dave', requestId: string) =>
  heard[who].filter((c) => c.requestId === requestId).map((c) => ({ callId: c.callId, status: c.status }));

/** Commands other than Lua's own that touched the request's hash while `work` ran. */
async function onRequestHash(requestId: string, work: () => Promise<void>) {
  const monitored = await monitorCommands(TEST_REDIS_URL);
  try {
    await work();
  } finally {
    monitored.stop();
  }
  const hash = `${prefixes.keyPrefix}:approvals}:request:${requestId}`;
  return monitored.seen.filter((s) => s.client !== 'lua' && s.args.some((a) => a.endsWith(hash)));
}

it("tells the routed group's inbox of a new request and of the vote that decided it, reading nothing back", async () => {
  const request = approvalRequest({ args: { service: 'web', replicas: 2 } });
  const touched = await onRequestHash(request.requestId, async () => {
    await queues.submit(request);
    await waitFor(async () => heardOf('bob', request.requestId).length === 1, 'bob hears of it');
    const vote = await callAs(
      service.url,
      testToken('carol'),
      'POST',
      `/approvals/${request.requestId}/decisions`,
      { decision: 'approve' },
    );
    expect(vote.status).toBe(200);
    await waitFor(async () => heardOf('bob', request.requestId).length === 2, 'bob hears it decided');
  });
  expect(heardOf('bob', request.requestId)).toEqual([
    { callId: request.callId, status: 'pending' },
    { callId: request.callId, status: 'decided' },
  ]);
  expect(heardOf('dave', request.requestId)).toEqual([]);
  // The live updates read nothing back: no HMGET of the call ID and groups on the request's hash.
  expect(touched.filter((s) => s.command === 'hmget')).toEqual([]);
});

it('still tells a change announced without its route, reading the route back once', async () => {
  const request = approvalRequest({ args: { service: 'web', replicas: 3 } });
  await queues.submit(request);
  await waitFor(async () => heardOf('bob', request.requestId).length === 1, 'bob hears of it');
  const touched = await onRequestHash(request.requestId, async () => {
    await service.app.get(LiveUpdates).announce({ requestId: request.requestId, status: 'pending' });
    await waitFor(async () => heardOf('bob', request.requestId).length === 2, 'bob hears it again');
  });
  expect(heardOf('bob', request.requestId)[1]).toEqual({ callId: request.callId, status: 'pending' });
  expect(heardOf('dave', request.requestId)).toEqual([]);
  expect(touched.filter((s) => s.command === 'hmget')).toHaveLength(1);
});

// A request routed over Slack when Slack is not configured (no SLACK_BOT_TOKEN) queues no Slack job: its handler would
// only read the request back and return, about fifty Redis commands per request for nothing. Real Redis, a listening
// approval service, the agent's side of the queues.
import { Queue } from 'bullmq';
import { ApprovalServiceQueueName, jobIds } from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { approvalsConfig, group } from '../support/fixtures';
import { deletePrefixedKeys, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

const prefixes = uniquePrefixes('notify-unconfigured');
const APPROVALS = approvalsConfig({
  groups: [group('ops', ['bob', 'carol'], '#ops')],
  defaultGroup: 'ops',
  defaults: { channels: ['slack', 'web'] },
});

let service: RunningApprovalService;
let queues: AgentSideQueues;
let notifications: Queue;

beforeAll(async () => {
  service = await startApprovalService(approvalServiceEnv(prefixes, APPROVALS), {
    port: 0,
    host: '127.0.0.1',
  });
  queues = new AgentSideQueues(prefixes);
  notifications = new Queue(ApprovalServiceQueueName.Notifications, {
    connection: queues.connection,
    prefix: prefixes.queuePrefix,
    skipMetasUpdate: true,
  });
});

afterAll(async () => {
  await service?.close();
  await notifications?.close();
  await queues?.close();
  await deletePrefixedKeys(prefixes);
});

it('queues no Slack job for a request routed to a Slack channel while Slack is not configured', async () => {
  const request = await queues.submit(approvalRequest({ toolName: 'restart_service' }));
  // The request's job completes once its notifications are queued (they are awaited).
  await waitFor(
    async () =>
      (await queues.requests.getJobState(jobIds.approvalRequest(request.requestId))) === 'completed',
    'the request taken in',
  );
  expect((await service.app.get(RequestStore).get(request.requestId))?.status).toBe('pending');
  const counts = await notifications.getJobCounts();
  expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(0);
});

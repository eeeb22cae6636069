// QUEUE_SHARDS=3 and AUDIT_SHARDS=3 on one Redis: both services on three copies of every queue and three audit
// streams. Runs land on the copy of their run ID (seen on the queues themselves), every one still completes through a
// person's approval, nothing is left on the one-shard prefix, and GET /audit reads both services' entries.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIds, QueueName } from '@countersign/contracts';
import { queueShardOf, queueShardPrefixes } from '@countersign/platform';
import { restartScript, TestSystem } from './support/system';
import { TEST_REDIS_URL } from './support/redis';

const SHARDS = 3;
const RUNS = 9;

describe('queue and audit shards (QUEUE_SHARDS=3, AUDIT_SHARDS=3, one Redis)', () => {
  let system: TestSystem;
  let redis: Redis;
  const shardEnv = { QUEUE_SHARDS: String(SHARDS), AUDIT_SHARDS: String(SHARDS) };
  beforeAll(async () => {
    system = await TestSystem.start('shards', {
      workerEnv: shardEnv,
      approvalEnv: { ...shardEnv, APPROVAL_SHARDS: String(SHARDS) },
      workers: 2,
    });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
  });

  /** The copies of one queue, shard 0 first, as a test-side reader. */
  function shardsOf(name: string): Queue[] {
    return queueShardPrefixes(system.prefixes.queuePrefix, SHARDS).map(
      (prefix) => new Queue(name, { connection: redis, prefix }),
    );
  }

  it('puts each run on the shard of its run ID and completes every run through an approval', async () => {
    // The demo infra's three services, three runs each: each run restarts its service once.
    const names = ['api', 'payments', 'web'];
    const services = Array.from({ length: RUNS }, (_, i) => names[i % names.length]);
    const runIds = await Promise.all(services.map((service) => system.startRun(restartScript(service))));
    const shardOfRun = new Map(runIds.map((runId) => [runId, queueShardOf(runId, SHARDS)]));
    // Nine random run IDs on three shards: at least two shards are used (all nine on one: 3 × (1/3)^9).
    expect(new Set(shardOfRun.values()).size).toBeGreaterThan(1);

    const calls = await Promise.all(runIds.map((runId) => system.waitForPendingCall(runId)));
    await Promise.all(calls.map((call) => system.waitForApproval(call.callId)));

    // The start job and the approval request of each run are on its shard's queues, and on no other.
    const runQueues = shardsOf(QueueName.AgentRuns);
    const requestQueues = shardsOf(QueueName.ApprovalRequests);
    const decisionQueues = shardsOf(QueueName.ApprovalDecisions);
    try {
      for (const [i, runId] of runIds.entries()) {
        const home = shardOfRun.get(runId)!;
        const starts = await Promise.all(runQueues.map((q) => q.getJob(jobIds.startRun(runId))));
        expect(starts.map((job) => job !== undefined)).toEqual([0, 1, 2].map((s) => s === home));
        const requestId = calls[i].requestId!;
        expect(requestId).toBeDefined();
        const requests = await Promise.all(
          requestQueues.map((q) => q.getJob(jobIds.approvalRequest(requestId))),
        );
        expect(requests.map((job) => job !== undefined)).toEqual([0, 1, 2].map((s) => s === home));
      }

      for (const call of calls) {
        const decided = await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', {
          decision: 'approve',
        });
        expect(decided.status).toBe(200);
      }
      await Promise.all(runIds.map((runId) => system.waitForStatus(runId, 'completed', 30_000)));
      for (const name of names) expect((await system.service(name)).restarts).toBe(RUNS / names.length);

      // Each decision rode its run's shard.
      for (const [i, runId] of runIds.entries()) {
        const home = shardOfRun.get(runId)!;
        const decisions = await Promise.all(
          decisionQueues.map((q) => q.getJob(jobIds.decision(calls[i].requestId!))),
        );
        expect(decisions.map((job) => job !== undefined)).toEqual([0, 1, 2].map((s) => s === home));
      }
    } finally {
      await Promise.all([...runQueues, ...requestQueues, ...decisionQueues].map((q) => q.close()));
    }
    // Nothing went to the unsharded prefix (which is none of the three when there are three shards).
    expect(queueShardPrefixes(system.prefixes.queuePrefix, SHARDS)).not.toContain(
      system.prefixes.queuePrefix,
    );
    expect(await redis.keys(`${system.prefixes.queuePrefix}:*`)).toEqual([]);

    // The audit, read over its three streams: the approval service's decisions and the workers' executions.
    for (const call of calls) {
      await system.waitForAudit(call.callId, 'decision.recorded');
      await system.waitForAudit(call.callId, 'tool.executed');
    }
    const { json: verified } = await system.api<{ intact: boolean; chains: number }>(
      'GET',
      '/audit/verify',
      'auditor',
    );
    expect(verified).toMatchObject({ intact: true });
    // Every writer of these runs' entries has its chain, read back over the three streams: the approval service and
    // each worker that took one of the runs (which of the two workers took them is the queues' choice).
    const writers = new Set<string>();
    for (const runId of runIds)
      for (const entry of await system.audit({ runId }, 'auditor')) writers.add(entry.chain);
    expect(
      [...writers].filter((chain) => chain.startsWith('approval-service:')).length,
    ).toBeGreaterThanOrEqual(1);
    expect([...writers].filter((chain) => chain.startsWith('agent-worker:')).length).toBeGreaterThanOrEqual(
      1,
    );
    expect(verified.chains).toBeGreaterThanOrEqual(writers.size);
  });

  it('counts every shard of every queue on /health', async () => {
    const res = await fetch(`${system.approvalUrl}/health`);
    const body = (await res.json()) as { queues: Record<string, unknown> };
    expect(Object.keys(body.queues).sort()).toEqual(
      [QueueName.ApprovalDecisions, QueueName.ApprovalNotifications]
        .flatMap((name) => [name, `${name}#1`, `${name}#2`])
        .sort(),
    );
  });
});

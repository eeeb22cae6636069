// One Countersign deployment under test: a Redis target (the shared server, an own server or an own
// cluster), a key/queue prefix, worker processes, and test-side clients for queues and state.
import { Queue } from 'bullmq';
import { type ApprovalRequest, JobName, jobIds, QueueName, type StartRunJob } from '@countersign/contracts';
import { createRedis, queueShardOf, queueShardPrefixes, type RedisClient } from '@countersign/platform';
import { AuditLog } from '@countersign/audit';
import { infraKeys } from '@countersign/demo-infra';
import { runKey } from '../../../apps/agent-worker/src/runs/run-keys';
import { workerEnv } from '../../support/agent-worker-harness';
import { testAuditKeyring } from '../../support/audit';
import { deletePrefixedKeys, TEST_REDIS_URL, type TestPrefixes, uniquePrefixes } from '../../support/redis';
import { WorkerProcess } from './worker-processes';

export interface RedisTarget {
  url: string;
  /** REDIS_CLUSTER_NODES when the target is a cluster. */
  clusterNodes?: string;
  /** True for a server the suite owns (stopped afterwards, so nothing to delete). */
  owned?: boolean;
}

export const SHARED_REDIS: RedisTarget = { url: TEST_REDIS_URL };

export interface DeploymentOptions {
  /** QUEUE_SHARDS of the services (default 1: every queue under the one prefix). */
  queueShards?: number;
  /** AUDIT_SHARDS of the services (default 1: one audit stream). */
  auditShards?: number;
  /** APPROVAL_SHARDS of the approval service (default 1: one approval-state tag). */
  approvalShards?: number;
}

export interface RunState {
  status?: string;
  messages?: string;
}

export class Deployment {
  readonly prefixes: TestPrefixes;
  readonly redis: RedisClient;
  /** For BullMQ: blocking-safe (maxRetriesPerRequest null). */
  readonly queueConnection: RedisClient;
  readonly queueShards: number;
  readonly auditShards: number;
  /** APPROVAL_SHARDS of the approval service (default 1: one approval-state tag). */
  readonly approvalShards: number;
  /** Shard 0 of each queue (the only one unless queueShards > 1); `…Shards` hold every shard, shard 0 first. */
  readonly runs: Queue;
  readonly requests: Queue;
  readonly decisions: Queue;
  readonly runShards: Queue[];
  readonly requestShards: Queue[];
  readonly decisionShards: Queue[];
  readonly audit: AuditLog;
  readonly workers: WorkerProcess[] = [];

  constructor(
    label: string,
    readonly target: RedisTarget = SHARED_REDIS,
    options: DeploymentOptions = {},
  ) {
    this.prefixes = uniquePrefixes(label);
    this.queueShards = options.queueShards ?? 1;
    this.auditShards = options.auditShards ?? 1;
    this.approvalShards = options.approvalShards ?? 1;
    const redisTarget = { url: target.url, clusterNodes: target.clusterNodes };
    this.redis = createRedis(redisTarget, { name: 'reliability' });
    this.queueConnection = createRedis(redisTarget, { blocking: true, name: 'reliability-queues' });
    const shardPrefixes = queueShardPrefixes(this.prefixes.queuePrefix, this.queueShards);
    const shards = (name: string) =>
      shardPrefixes.map((prefix) => new Queue(name, { connection: this.queueConnection, prefix }));
    this.runShards = shards(QueueName.AgentRuns);
    this.requestShards = shards(QueueName.ApprovalRequests);
    this.decisionShards = shards(QueueName.ApprovalDecisions);
    [this.runs, this.requests, this.decisions] = [
      this.runShards[0],
      this.requestShards[0],
      this.decisionShards[0],
    ];
    this.audit = new AuditLog(this.redis, this.prefixes.keyPrefix, 'reliability', testAuditKeyring(), {
      shards: this.auditShards,
    });
  }

  /** The environment of a worker (or, with the approval-service variables, of the approval service). */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return workerEnv(this.prefixes, {
      REDIS_URL: this.target.url,
      ...(this.target.clusterNodes ? { REDIS_CLUSTER_NODES: this.target.clusterNodes } : {}),
      LOG_LEVEL: 'warn',
      ...(this.queueShards > 1 ? { QUEUE_SHARDS: String(this.queueShards) } : {}),
      ...(this.auditShards > 1 ? { AUDIT_SHARDS: String(this.auditShards) } : {}),
      ...extra,
    });
  }

  async startWorkers(count: number, extra: Record<string, string> = {}): Promise<WorkerProcess[]> {
    const started = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        WorkerProcess.start(`${this.prefixes.keyPrefix}-w${this.workers.length + i}`, this.env(extra)),
      ),
    );
    this.workers.push(...started);
    return started;
  }

  /** Services the runs restart, one per call, so a restart count is the execution count of one call. */
  async addServices(names: string[]): Promise<void> {
    const key = infraKeys(this.prefixes.keyPrefix).services;
    for (let i = 0; i < names.length; i += 2_000) {
      const fields: Record<string, string> = {};
      for (const name of names.slice(i, i + 2_000)) {
        fields[`${name}:status`] = 'healthy';
        fields[`${name}:replicas`] = '1';
        fields[`${name}:restarts`] = '0';
      }
      await this.redis.hset(key, fields);
    }
  }

  /** The shard (index into `…Shards`) that carries a run's jobs, as the services pick it. */
  shardOf(runId: string): number {
    return queueShardOf(runId, this.queueShards);
  }

  async startRuns(jobs: StartRunJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 500) {
      const batch = jobs.slice(i, i + 500);
      await Promise.all(
        this.runShards.map((queue, shard) =>
          queue.addBulk(
            batch
              .filter((data) => this.shardOf(data.runId) === shard)
              .map((data) => ({
                name: JobName.StartRun,
                data,
                opts: { jobId: jobIds.startRun(data.runId) },
              })),
          ),
        ),
      );
    }
  }

  /** Status (and optionally messages) of many runs, read straight from Redis in batches. */
  async runStates(runIds: string[], withMessages = false): Promise<RunState[]> {
    const states: RunState[] = [];
    for (let i = 0; i < runIds.length; i += 1_000) {
      const batch = runIds.slice(i, i + 1_000);
      states.push(
        ...(await Promise.all(
          batch.map(async (runId) => {
            const meta = runKey(this.prefixes.keyPrefix, runId);
            if (!withMessages) return { status: (await this.redis.hget(meta, 'status')) ?? undefined };
            const [status, messages] = await this.redis.hmget(meta, 'status', 'messages');
            return { status: status ?? undefined, messages: messages ?? undefined };
          }),
        )),
      );
    }
    return states;
  }

  /** Polls until every run finished; returns early (the caller counts the rest as lost) when progress stops for `stallMs`. */
  async waitForRunsToFinish(runIds: string[], stallMs = 30_000): Promise<number> {
    let best = -1;
    let lastProgress = Date.now();
    for (;;) {
      const states = await this.runStates(runIds);
      const done = states.filter((s) => s.status === 'completed' || s.status === 'failed').length;
      if (done === runIds.length) return done;
      if (done > best) [best, lastProgress] = [done, Date.now()];
      if (Date.now() - lastProgress > stallMs) return done;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async approvalRequest(requestId: string): Promise<ApprovalRequest | undefined> {
    // A request ID does not say its run: look on every shard.
    for (const queue of this.requestShards) {
      const job = await queue.getJob(jobIds.approvalRequest(requestId));
      if (job) return job.data as ApprovalRequest;
    }
    return undefined;
  }

  /** Stops workers (kill -9: nothing to finish in a test that is over), closes clients, removes keys. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.kill()));
    await Promise.allSettled(
      [...this.runShards, ...this.requestShards, ...this.decisionShards].map((queue) => queue.close()),
    );
    await Promise.allSettled([this.redis.quit(), this.queueConnection.quit()]);
    if (!this.target.owned) await deletePrefixedKeys(this.prefixes, this.target.url);
  }
}

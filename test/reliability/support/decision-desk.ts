// Plays the approval service at queue level: takes every approval request off `approval-requests` (every queue
// shard), decides it by plan, and publishes signed decisions in random order, some of them twice, each on the shard
// of its run.
import { createHash } from 'node:crypto';
import { type Job, Worker } from 'bullmq';
import { withSignature } from '@countersign/authorization';
import { type ApprovalRequest, type Decision, JobName, jobIds, QueueName } from '@countersign/contracts';
import { TEST_SECRET } from '../../support/agent-worker-harness';
import type { Deployment } from './deployment';

export type Verdict = 'approve' | 'deny';

/** A deterministic pseudo-random number in [0, 1) from a string (the plan must be reproducible). */
export function unitHash(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 0x1_0000_0000;
}

export interface DeskOptions {
  /** The verdict for a call (default: approve). */
  plan?: (request: ApprovalRequest) => Verdict;
  /** Share of decisions published a second time (another job ID, so the queue delivers it twice). */
  duplicateShare?: number;
  /** Decisions are held and published in shuffled batches of at most this many. */
  batch?: number;
}

export function signedDecision(request: ApprovalRequest, verdict: Verdict): Decision & { signature: string } {
  const decision: Decision = {
    requestId: request.requestId,
    callId: request.callId,
    runId: request.runId,
    decision: verdict,
    decidedBy: 'person',
    approvers: ['bob'],
    reason: verdict === 'deny' ? 'not now' : undefined,
    fingerprint: request.fingerprint,
    shown: { toolName: request.toolName, args: request.args },
    attempt: request.attempt,
    decidedAt: new Date().toISOString(),
  };
  return withSignature(JSON.parse(JSON.stringify(decision)) as Decision, TEST_SECRET);
}

export class DecisionDesk {
  readonly requests: ApprovalRequest[] = [];
  /** callId → attempts seen. */
  readonly attempts = new Map<string, number[]>();
  published = 0;
  duplicated = 0;
  private pool: ApprovalRequest[] = [];
  private readonly consumers: Worker[] = [];
  private pump?: NodeJS.Timeout;
  private pumping = false;
  paused = false;

  constructor(
    private readonly deployment: Deployment,
    private readonly options: DeskOptions = {},
  ) {}

  verdict(request: ApprovalRequest): Verdict {
    return this.options.plan?.(request) ?? 'approve';
  }

  start(): void {
    for (const queue of this.deployment.requestShards) this.consumers.push(this.consume(queue.opts.prefix!));
    this.pump = setInterval(() => void this.flush(), 20);
  }

  private consume(prefix: string): Worker {
    return new Worker(
      QueueName.ApprovalRequests,
      async (job: Job) => {
        const request = job.data as ApprovalRequest;
        if (request.reason === 'manual_step') return;
        this.requests.push(request);
        this.attempts.set(request.callId, [...(this.attempts.get(request.callId) ?? []), request.attempt]);
        this.pool.push(request);
      },
      {
        connection: this.deployment.queueConnection,
        prefix,
        concurrency: 50,
        removeOnComplete: { count: 0 },
      },
    );
  }

  /** Publishes what is pooled, shuffled, with duplicates mixed in at random positions. */
  private async flush(): Promise<void> {
    if (this.pumping || this.paused || this.pool.length === 0) return;
    this.pumping = true;
    const take = this.pool.splice(0, this.options.batch ?? 400);
    try {
      shuffle(take);
      const jobs = take.flatMap((request) => {
        const shard = this.deployment.shardOf(request.runId);
        const data = signedDecision(request, this.verdict(request));
        const first = {
          shard,
          name: JobName.Decision,
          data,
          opts: { jobId: jobIds.decision(request.requestId) },
        };
        if (unitHash(`dup:${request.callId}:${request.attempt}`) >= (this.options.duplicateShare ?? 0))
          return [first];
        this.duplicated++;
        return [
          first,
          {
            shard,
            name: JobName.Decision,
            data,
            opts: { jobId: `dup-${request.callId}-${request.attempt}` },
          },
        ];
      });
      shuffle(jobs);
      await Promise.all(
        this.deployment.decisionShards.map((queue, shard) =>
          queue.addBulk(jobs.filter((job) => job.shard === shard).map(({ shard: _, ...job }) => job)),
        ),
      );
      this.published += jobs.length;
    } catch {
      this.pool.push(...take); // Redis unreachable (a restart scenario): publish them on a later tick
    } finally {
      this.pumping = false;
    }
  }

  async close(): Promise<void> {
    if (this.pump) clearInterval(this.pump);
    await Promise.all(this.consumers.map((consumer) => consumer.close()));
  }
}

function shuffle<T>(items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
}

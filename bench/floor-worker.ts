// The floor's "agent worker": the same queue hops as an approval round trip with nothing else — no policy,
// no run state, no audit, no HTTP. A start job publishes a request; a decision job "resumes" (the probe event).
// Started by the bench as a child process, like the real worker.
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { ProbeEvent } from './support/worker-probe';

export const FloorQueue = {
  Runs: 'floor-runs',
  Requests: 'floor-requests',
  Decisions: 'floor-decisions',
} as const;
/** The same defaults the agent worker sets on its queues and workers. */
export const FLOOR_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
};

const wallNow = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const prefix = process.env.QUEUE_PREFIX!;
  const concurrency = Number(process.env.CONCURRENCY ?? 16);
  const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: null,
  });
  const requests = new Queue(FloorQueue.Requests, {
    connection,
    prefix,
    defaultJobOptions: FLOOR_JOB_OPTIONS,
  });
  const report = (events: ProbeEvent[]) => process.send?.({ probe: events });
  const options = { connection, prefix, concurrency, removeOnComplete: { age: 3600, count: 10_000 } };

  const runs = new Worker(
    FloorQueue.Runs,
    async (job) => {
      const { runId, callId } = job.data as { runId: string; callId: string };
      await requests.add('request', { runId, callId }, { jobId: callId });
    },
    options,
  );
  const decisions = new Worker(
    FloorQueue.Decisions,
    async (job) => {
      const { runId, callId } = job.data as { runId: string; callId: string };
      const at = wallNow();
      report([
        { t: 'exec', runId, callId, tool: 'floor', at },
        { t: 'done', runId, status: 'completed', at },
      ]);
    },
    options,
  );
  await Promise.all([runs.waitUntilReady(), decisions.waitUntilReady(), requests.waitUntilReady()]);
  process.send?.({ ready: true });

  const stop = async () => {
    await Promise.all([runs.close(), decisions.close(), requests.close()]);
    connection.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

if (require.main === module) void main();

// The floors' "agent worker": the same queue hops as an approval round trip with nothing else — no policy,
// no run state, no audit. A start job publishes a request; a decision job "resumes" (the probe event).
// Started by the bench as a child process, like the real worker. FLOOR_KIND=contract adds the one HTTP door the
// public contract requires of a worker (POST /runs, plain node:http, no auth, no validation). Every floor uses the
// product's queue names, job names and job IDs under a queue prefix of its own (QUEUE_PREFIX), so floors and
// Countersign run side by side on one Redis and their key names cost the same bytes.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { JobName, jobIds, QueueName } from '@countersign/contracts';
import { QUEUE_EVENTS_MAX_LEN, REMOVE_ON_COMPLETE } from '../libs/platform/src/queues/retention';
import type { ProbeEvent } from './support/worker-probe';

export const FloorKind = { Bare: 'bare', Contract: 'contract' } as const;
export type FloorKind = (typeof FloorKind)[keyof typeof FloorKind];

/**
 * The product's queue names, for every floor and peer: each runs under a queue prefix of its own, as long as
 * Countersign's (support/prefixes.ts), so no phase takes another's jobs and key names weigh the same in every phase.
 */
export const FloorQueue = {
  Runs: QueueName.AgentRuns,
  Requests: QueueName.ApprovalRequests,
  Decisions: QueueName.ApprovalDecisions,
} as const;
/** The product's job names and IDs (jobs are hashes whose name and key are sent to Redis too). */
export const FloorJobName = {
  Start: JobName.StartRun,
  Request: JobName.RequestApproval,
  Decision: JobName.Decision,
} as const;
export const floorJobIds = jobIds;
/** The same defaults the agent worker sets on its queues and workers. */
export const FLOOR_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
};
/** Every floor's and peer's queues: those job options, and the product's cap of the event streams. */
export const FLOOR_QUEUE_OPTIONS = {
  defaultJobOptions: FLOOR_JOB_OPTIONS,
  streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } },
};
/** Their workers keep the finished jobs the product's keep. */
export { REMOVE_ON_COMPLETE };
/** What the floors report as the executed tool (the round trip's probe reports `restart_service`). */
export const FLOOR_TOOL = 'floor';
/** Job data on every floor queue. The contract floor's run has one call, named like the run (no state to look it up). */
export interface FloorJob {
  runId: string;
  callId: string;
}

const wallNow = () => performance.timeOrigin + performance.now();

/** The floors' HTTP doors read their JSON body as any server must, and nothing more. */
export function parsesAsJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8') || '{}');
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const kind = (process.env.FLOOR_KIND ?? FloorKind.Bare) as FloorKind;
  const names = FloorQueue;
  const prefix = process.env.QUEUE_PREFIX!;
  const concurrency = Number(process.env.CONCURRENCY ?? 16);
  const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: null,
  });
  const queue = (name: string) => new Queue(name, { connection, prefix, ...FLOOR_QUEUE_OPTIONS });
  const requests = queue(names.Requests);
  const runsQueue = kind === FloorKind.Contract ? queue(names.Runs) : undefined;
  const report = (events: ProbeEvent[]) => process.send?.({ probe: events });
  const options = { connection, prefix, concurrency, removeOnComplete: { ...REMOVE_ON_COMPLETE } };

  const runs = new Worker<FloorJob>(
    names.Runs,
    async (job) => {
      const { runId, callId } = job.data;
      await requests.add(
        FloorJobName.Request,
        { runId, callId },
        { jobId: floorJobIds.approvalRequest(callId) },
      );
    },
    options,
  );
  const decisions = new Worker<FloorJob>(
    names.Decisions,
    async (job) => {
      const { runId, callId } = job.data;
      const at = wallNow();
      report([
        { t: 'exec', runId, callId, tool: FLOOR_TOOL, at },
        { t: 'done', runId, status: 'completed', at },
      ]);
    },
    options,
  );
  // The contract floor's POST /runs: reads the body (as any server must), queues the start job, answers 202.
  const server = runsQueue
    ? createServer((req, res) => {
        if (req.method !== 'POST' || req.url !== '/runs') return void res.writeHead(404).end();
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          // Parsed like any JSON door, then unused; a body that is not JSON is refused, never crashes the stand-in.
          if (!parsesAsJson(Buffer.concat(chunks))) return void res.writeHead(400).end();
          const runId = randomUUID();
          runsQueue
            .add(FloorJobName.Start, { runId, callId: runId }, { jobId: floorJobIds.startRun(runId) })
            .then(
              () => res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ runId })),
              () => res.writeHead(503).end(),
            );
        });
      })
    : undefined;
  await Promise.all([runs.waitUntilReady(), decisions.waitUntilReady(), requests.waitUntilReady()]);
  if (server) await new Promise<void>((done) => server.listen(Number(process.env.PORT), '127.0.0.1', done));
  process.send?.({ ready: true });

  const stop = async () => {
    server?.close();
    await Promise.all([runs.close(), decisions.close(), requests.close(), runsQueue?.close()]);
    connection.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

if (require.main === module) void main();

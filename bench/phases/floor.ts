// The floor: a bare BullMQ ping-pong with the round trip's hops (start → request queue → decision queue →
// resume) over the same Redis, at the same N and concurrency, with no policy and no HTTP.
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { FLOOR_JOB_OPTIONS, FloorQueue } from '../floor-worker';
import type { Child } from '../support/processes';
import { Flow } from '../support/flow';
import {
  commandCalls,
  commandsPerRun,
  pool,
  Progress,
  wallNow,
  type LatencySummary,
} from '../support/measure';

export interface FloorOptions {
  label: string;
  runs: number;
  worker: Child;
  redisUrl: string;
  queuePrefix: string;
  startConcurrency: number;
  decideConcurrency: number;
  quiet?: boolean;
  commandsRedis: Redis;
}

export interface FloorResult {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  /** Stand-in starts adding the decision job → the floor worker's decision handler starts. */
  decisionToExecution: LatencySummary;
  redisCommandsPerRun: ReturnType<typeof commandsPerRun>;
}

export async function floor(o: FloorOptions): Promise<FloorResult> {
  const bar = o.quiet ? undefined : new Progress(o.label, o.runs);
  const flow = new Flow(o.runs, 'floor', (done) => bar?.update(done));
  flow.watch([o.worker]);
  const connection = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  const prefix = o.queuePrefix;
  const runs = new Queue(FloorQueue.Runs, { connection, prefix, defaultJobOptions: FLOOR_JOB_OPTIONS });
  const decisions = new Queue(FloorQueue.Decisions, {
    connection,
    prefix,
    defaultJobOptions: FLOOR_JOB_OPTIONS,
  });
  // The approver stand-in: takes each request off the queue and answers at once.
  const approver = new Worker(
    FloorQueue.Requests,
    async (job) => {
      const { runId, callId } = job.data as { runId: string; callId: string };
      flow.sentAt.set(callId, wallNow());
      await decisions.add('decision', { runId, callId }, { jobId: `decision-${callId}` });
      flow.progressed();
    },
    { connection, prefix, concurrency: o.decideConcurrency, removeOnComplete: { age: 3600, count: 10_000 } },
  );
  const tag = randomBytes(4).toString('hex');
  const commandsBefore = await commandCalls(connection);
  try {
    await approver.waitUntilReady();
    flow.markStart();
    const starting = pool(o.runs, o.startConcurrency, async (i) => {
      const runId = `floor-${tag}-${i}`;
      await runs.add('start', { runId, callId: `call-${tag}-${i}` }, { jobId: runId });
      flow.progressed();
      await Promise.race([flow.runDone(runId), flow.finished]);
    });
    await Promise.all([starting, flow.finished]);
  } finally {
    flow.close();
    bar?.stop();
    await approver.close();
    await Promise.all([runs.close(), decisions.close()]);
    connection.disconnect();
  }
  const redisCommandsPerRun = commandsPerRun(commandsBefore, await commandCalls(o.commandsRedis), o.runs);
  return {
    runs: o.runs,
    redisCommandsPerRun,
    seconds: flow.seconds,
    runsPerSecond: o.runs / flow.seconds,
    decisionToExecution: flow.decisionToExecution.summary(),
  };
}

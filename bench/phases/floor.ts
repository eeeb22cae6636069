// The floor: a bare BullMQ ping-pong with the round trip's hops (start → request queue → decision queue →
// resume) over the same Redis, at the same N and concurrency, with no policy and no HTTP. The peers (an agent loop
// of another framework behind the same hops, bench/peers/) are driven by the same code, each on its own prefix.
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  FLOOR_QUEUE_OPTIONS,
  FLOOR_TOOL,
  type FloorJob,
  FloorJobName,
  floorJobIds,
  FloorQueue,
  REMOVE_ON_COMPLETE,
} from '../floor-worker';
import type { Child } from '../support/processes';
import { CostMeter, type PhaseCost } from '../support/cost';
import { Flow } from '../support/flow';
import { pool, Progress, wallNow, type LatencySummary } from '../support/measure';

export interface FloorOptions {
  label: string;
  runs: number;
  worker: Child;
  redisUrl: string;
  /** The floor's or peer's own queue prefix (support/prefixes.ts). */
  queuePrefix: string;
  startConcurrency: number;
  decideConcurrency: number;
  quiet?: boolean;
  commandsRedis: Redis;
  /** The tool whose handler ends "decision → resume"; @defaultValue the floor's */
  executedTool?: string;
  /** CPU of the phase's processes, commands and bytes; @defaultValue commands and bytes of `commandsRedis` only */
  meter?: CostMeter;
}

export interface FloorFigures {
  runs: number;
  /** Runs that ended otherwise than completed (a peer's run can fail; the floor's cannot). */
  failed: number;
  seconds: number;
  runsPerSecond: number;
  /** Stand-in starts adding the decision job → the floor worker's decision handler starts. */
  decisionToExecution: LatencySummary;
}

export type FloorResult = FloorFigures & PhaseCost;

export async function floor(o: FloorOptions): Promise<FloorResult> {
  const bar = o.quiet ? undefined : new Progress(o.label, o.runs);
  const flow = new Flow(o.runs, o.executedTool ?? FLOOR_TOOL, (done) => bar?.update(done));
  flow.watch([o.worker]);
  const names = FloorQueue;
  const connection = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  const prefix = o.queuePrefix;
  const runs = new Queue(names.Runs, { connection, prefix, ...FLOOR_QUEUE_OPTIONS });
  const decisions = new Queue(names.Decisions, {
    connection,
    prefix,
    ...FLOOR_QUEUE_OPTIONS,
  });
  // The approver stand-in: takes each request off the queue and answers at once.
  const approver = new Worker<FloorJob>(
    names.Requests,
    async (job) => {
      const { runId, callId } = job.data;
      flow.sentAt.set(callId, wallNow());
      await decisions.add(FloorJobName.Decision, { runId, callId }, { jobId: floorJobIds.decision(callId) });
      flow.progressed();
    },
    { connection, prefix, concurrency: o.decideConcurrency, removeOnComplete: { ...REMOVE_ON_COMPLETE } },
  );
  await approver.waitUntilReady();
  const endMeter = await (o.meter ?? new CostMeter(o.commandsRedis)).begin();
  let cost: PhaseCost;
  try {
    flow.markStart();
    const starting = pool(o.runs, o.startConcurrency, async () => {
      // UUIDs, as Countersign's run and call IDs are: they are in job keys and payloads.
      const runId = randomUUID();
      await runs.add(
        FloorJobName.Start,
        { runId, callId: randomUUID() },
        { jobId: floorJobIds.startRun(runId) },
      );
      flow.progressed();
      await Promise.race([flow.runDone(runId), flow.finished]);
    });
    await Promise.all([starting, flow.finished]);
    cost = await endMeter(o.runs);
  } finally {
    flow.close();
    bar?.stop();
    await approver.close();
    await Promise.all([runs.close(), decisions.close()]);
    connection.disconnect();
  }
  return {
    runs: o.runs,
    ...cost,
    failed: flow.failed,
    seconds: flow.seconds,
    runsPerSecond: o.runs / flow.seconds,
    decisionToExecution: flow.decisionToExecution.summary(),
  };
}

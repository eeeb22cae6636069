// A peer's worker process: what a user would otherwise build, an agent loop of another framework that pauses a tool
// call for approval, behind the floors' three BullMQ hops (start job → request job → the stand-in adds a decision
// job → resume). PEER names the loop (bench/peers/<peer>.ts); the bench drives it like the bare floor
// (phases/floor.ts) and counts its CPU like any process it started. Started by the bench as a child process.
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  FLOOR_QUEUE_OPTIONS,
  type FloorJob,
  FloorJobName,
  floorJobIds,
  FloorQueue,
  REMOVE_ON_COMPLETE,
} from '../floor-worker';
import type { ProbeEvent } from '../support/worker-probe';

export const PEERS = ['langgraph', 'openai-agents'] as const;
export type PeerName = (typeof PEERS)[number];

/** The tool each peer's run calls once, like the round trip's. */
export const PEER_TOOL = 'restart_service';

/** One agent loop: run until the tool call waits for approval, then resume it approved. */
export interface PeerLoop {
  /** Runs the agent until it pauses for approval; answers the ID of the call that waits. */
  start(runId: string): Promise<string>;
  /** Resumes the run with the call approved: the tool runs, the model answers, the run ends. */
  resume(runId: string, callId: string): Promise<'completed' | 'failed'>;
  close(): Promise<void>;
}

export interface PeerContext {
  env: NodeJS.ProcessEnv;
  /** Redis for state the loop keeps there (the Agents SDK's RunState), under KEY_PREFIX. */
  redis: Redis;
  concurrency: number;
  /** Called as the tool's handler is entered: ends "decision → tool". */
  toolEntered(runId: string, callId: string): void;
}

const wallNow = () => performance.timeOrigin + performance.now();

async function loadPeer(peer: PeerName, context: PeerContext): Promise<PeerLoop> {
  // Loaded here, so the bench process itself never loads a peer's framework.
  if (peer === 'langgraph') return (await import('./langgraph')).langGraphLoop(context);
  return (await import('./openai-agents')).openAiAgentsLoop(context);
}

async function main(): Promise<void> {
  const peer = process.env.PEER as PeerName;
  if (!PEERS.includes(peer)) throw new Error(`PEER must be one of ${PEERS.join(', ')}, got "${peer}"`);
  const names = FloorQueue; // the product's names, under the peer's own QUEUE_PREFIX
  const prefix = process.env.QUEUE_PREFIX!;
  const concurrency = Number(process.env.CONCURRENCY ?? 16);
  const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  const report = (events: ProbeEvent[]) => process.send?.({ probe: events });
  const loop = await loadPeer(peer, {
    env: process.env,
    redis: connection,
    concurrency,
    toolEntered: (runId, callId) => report([{ t: 'exec', runId, callId, tool: PEER_TOOL, at: wallNow() }]),
  });
  const requests = new Queue(names.Requests, { connection, prefix, ...FLOOR_QUEUE_OPTIONS });
  const options = { connection, prefix, concurrency, removeOnComplete: { ...REMOVE_ON_COMPLETE } };
  const runs = new Worker<FloorJob>(
    names.Runs,
    async (job) => {
      const callId = await loop.start(job.data.runId);
      await requests.add(
        FloorJobName.Request,
        { runId: job.data.runId, callId },
        { jobId: floorJobIds.approvalRequest(callId) },
      );
    },
    options,
  );
  const decisions = new Worker<FloorJob>(
    names.Decisions,
    async (job) => {
      const { runId, callId } = job.data;
      // A resume that throws ends the run failed (counted by the bench), never a retry that could run the tool twice.
      const status = await loop.resume(runId, callId).catch((error: Error) => {
        console.error(`[peer ${process.env.PEER}] run ${runId}: ${error.stack ?? error.message}`);
        return 'failed' as const;
      });
      report([{ t: 'done', runId, status, at: wallNow() }]);
    },
    options,
  );
  await Promise.all([runs.waitUntilReady(), decisions.waitUntilReady(), requests.waitUntilReady()]);
  process.send?.({ ready: true });

  const stop = async () => {
    await Promise.all([runs.close(), decisions.close(), requests.close()]);
    await loop.close();
    connection.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(`[peer ${process.env.PEER}] ${error.stack ?? error.message}`);
    process.exit(1);
  });

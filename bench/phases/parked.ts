// Parked runs at rest: N runs started through the agent-runs queue (no HTTP), each parked on one
// confirm-tier call with small arguments, with no approval service consuming, so each leaves its run
// state and one queued approval-request job. Redis memory is read before and after (INFO used_memory),
// and every key of the phase's own prefixes is measured (MEMORY USAGE) for a breakdown that is immune
// to whatever else the shared Redis is doing.
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JobName, jobIds, QueueName, StartRunJobSchema } from '@countersign/contracts';
import type { Child } from '../support/processes';
import { Progress, sleep, usedMemory } from '../support/measure';
import { ROUND_TRIP_SCRIPT } from './round-trip';

export interface ParkedOptions {
  runs: number;
  redis: Redis;
  /** The phase's own prefixes: nothing else lives under them. */
  keyPrefix: string;
  queuePrefix: string;
  workers: Child[];
  quiet?: boolean;
}

export interface KeyClass {
  keys: number;
  bytes: number;
  bytesPerRun: number;
}

export interface ParkedResult {
  runs: number;
  seconds: number;
  parkedPerSecond: number;
  usedMemoryBefore: number;
  usedMemoryAfter: number;
  /** (after − before) / runs, INFO used_memory, after completed start jobs were cleaned. */
  infoBytesPerRun: number;
  /** Completed agent-runs jobs BullMQ keeps (removeOnComplete, at most 10,000): cleaned before the reading. */
  startJobRetentionBytes: number;
  /** MEMORY USAGE per key class under the phase's prefixes. */
  breakdown: Record<string, KeyClass>;
  /** Run state + queued approval-request jobs (job hashes and the wait list), MEMORY USAGE, per run. */
  stateBytesPerRun: number;
  approvalServiceConsuming: false;
}

/** The agent worker's job options at their defaults (agentWorkerQueues: JOB_ATTEMPTS, JOB_BACKOFF_MS). */
const JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
};
const CHUNK = 1_000;
const MAX_BACKLOG = 4_000;

export async function parkRuns(o: ParkedOptions): Promise<ParkedResult> {
  const connection = o.redis.duplicate({ maxRetriesPerRequest: null });
  const prefix = o.queuePrefix;
  // The queues' settings (the event streams' cap in their meta hashes) are the workers' own: the bench's handles
  // leave them as the product wrote them.
  const handle = { connection, prefix, skipMetasUpdate: true };
  const starts = new Queue(QueueName.AgentRuns, { ...handle, defaultJobOptions: JOB_OPTIONS });
  const requests = new Queue(QueueName.ApprovalRequests, handle);
  const bar = o.quiet ? undefined : new Progress(`park ${o.runs.toLocaleString('en-US')} runs`, o.runs);
  const exits = o.workers.map(
    (w) =>
      new Promise<never>((_, fail) =>
        w.proc.once('exit', () => fail(new Error(`${w.name} exited:\n${w.output()}`))),
      ),
  );
  exits.forEach((e) => e.catch(() => undefined));
  try {
    await sleep(500);
    const before = await usedMemory(o.redis);
    const started = Date.now();
    let enqueued = 0;
    let parked = 0;
    let lastChange = Date.now();
    while (parked < o.runs) {
      const [backlog, failed, waiting] = await Promise.all([
        starts.getWaitingCount(),
        starts.getFailedCount(),
        requests.getWaitingCount(),
      ]);
      if (failed > 0)
        throw new Error(`${failed} start jobs failed: ${(await starts.getFailed(0, 0))[0]?.failedReason}`);
      if (waiting !== parked) lastChange = Date.now();
      parked = waiting;
      bar?.update(parked, `(enqueued ${enqueued})`);
      if (Date.now() - lastChange > 60_000) throw new Error(`parking stalled at ${parked}/${o.runs}`);
      if (enqueued < o.runs && backlog < MAX_BACKLOG) {
        const n = Math.min(CHUNK, o.runs - enqueued);
        await starts.addBulk(
          Array.from({ length: n }, (_, k) => {
            const runId = `park-${enqueued + k}`;
            const data = StartRunJobSchema.parse({
              runId,
              agent: 'ops',
              userId: 'alice',
              input: 'restart api',
              script: ROUND_TRIP_SCRIPT,
            });
            return { name: JobName.StartRun, data, opts: { jobId: jobIds.startRun(runId) } };
          }),
        );
        enqueued += n;
        continue;
      }
      await sleep(200);
    }
    const seconds = (Date.now() - started) / 1000;
    while ((await starts.getActiveCount()) + (await starts.getWaitingCount()) > 0) await sleep(100);
    bar?.stop();

    const withRetention = await usedMemory(o.redis);
    await starts.clean(0, 1_000_000, 'completed');
    await sleep(500);
    const after = await usedMemory(o.redis);
    const breakdown = await measureKeys(o.redis, o.keyPrefix, o.runs);
    const state = ['run hash', 'approval-request job hash', 'approval-requests wait list'];
    const stateBytes = state.reduce((sum, name) => sum + (breakdown[name]?.bytes ?? 0), 0);
    return {
      runs: o.runs,
      seconds,
      parkedPerSecond: o.runs / seconds,
      usedMemoryBefore: before,
      usedMemoryAfter: after,
      infoBytesPerRun: (after - before) / o.runs,
      startJobRetentionBytes: withRetention - after,
      breakdown,
      stateBytesPerRun: stateBytes / o.runs,
      approvalServiceConsuming: false,
    };
  } finally {
    bar?.stop();
    await Promise.all([starts.close(), requests.close()]);
    connection.disconnect();
  }
}

function classify(key: string): string {
  if (/:run:[^}]+\}$/.test(key)) return 'run hash';
  if (/:audit\}:/.test(key)) return 'audit stream (run.parked entries)';
  if (/:approval-requests:wait$/.test(key)) return 'approval-requests wait list';
  if (/:approval-requests:events$/.test(key) || /:agent-runs:events$/.test(key))
    return 'queue event streams (capped)';
  if (/:approval-requests:[^:]+$/.test(key) && !/:(meta|id|marker|stalled-check)$/.test(key))
    return 'approval-request job hash';
  if (/:agent-runs:/.test(key)) return 'agent-runs queue bookkeeping';
  return 'other';
}

async function measureKeys(redis: Redis, keyPrefix: string, runs: number): Promise<Record<string, KeyClass>> {
  const classes: Record<string, KeyClass> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${keyPrefix}*`, 'COUNT', 2_000);
    cursor = next;
    if (keys.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0);
    const sizes = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const name = classify(key);
      const entry = (classes[name] ??= { keys: 0, bytes: 0, bytesPerRun: 0 });
      entry.keys++;
      entry.bytes += Number(sizes[i]?.[1] ?? 0);
    });
  } while (cursor !== '0');
  for (const entry of Object.values(classes)) entry.bytesPerRun = entry.bytes / runs;
  return classes;
}

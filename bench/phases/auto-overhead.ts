// Auto-tier overhead through the whole worker: a run of 100 auto calls (two turns of 50, the scripted model
// allows 64 per turn) against a run with no tool call, and against calling the same handler directly on the
// same Redis with the same concurrency (maxConcurrentTools, 4) in the same two batches. With `callDirect`, the
// same measurement for a worker whose tool is a provider's (an MCP server): "direct" is then the same server
// called by a client of its own.
import { Redis } from 'ioredis';
import { mapWithConcurrency } from '@countersign/authorization';
import { InfraStore, opsTools } from '@countersign/demo-infra';
import { cpuMsOf } from '../support/cost';
import type { Child } from '../support/processes';
import { sendJson } from '../support/http';
import { commandCalls, median, Progress, totalCalls, wallNow } from '../support/measure';
import type { ProbeEvent } from '../support/worker-probe';

export interface AutoOverheadOptions {
  worker: Child;
  redisUrl: string;
  keyPrefix: string;
  /** Of the principal that starts the runs. */
  requesterToken: string;
  repeats: number;
  calls: number;
  quiet?: boolean;
  /** @defaultValue 'auto-tier overhead' */
  label?: string;
  /** The direct call to compare with; @defaultValue the built-in get_service_status handler on the same Redis */
  callDirect?: (args: { service: string }) => Promise<unknown>;
}

export interface AutoOverheadResult {
  calls: number;
  repeats: number;
  /** Median wall time of a run with `calls` auto calls, POST /runs sent → run finished. */
  runWithCallsMs: number;
  /** Median wall time of a run that answers at once (no tool call). */
  emptyRunMs: number;
  /** Median wall time of the same handler calls made directly (no worker, no pipeline). */
  directCallsMs: number;
  /** (runWithCalls − emptyRun) / calls. */
  perCallThroughWorkerMs: number;
  directPerCallMs: number;
  /** perCallThroughWorker − directPerCall. */
  overheadPerCallMs: number;
  /**
   * The worker's CPU (utime + stime, /proc/<pid>/stat) per call: (mean CPU of a run with `calls` calls − mean CPU of
   * an empty run) / calls; undefined where /proc is not readable. Means, not medians: /proc counts 10 ms ticks, about
   * one per run here, so a median of them only says 0.1 or 0.2 ms per call.
   */
  workerCpuPerCallMs?: number;
  /**
   * Commands Redis ran per call, every client's (INFO commandstats; those inside Lua count): (mean
   * of a run with `calls` calls − mean of an empty run) / calls.
   */
  redisCommandsPerCall: number;
}

const TURN = 50;
const MAX_CONCURRENT_TOOLS = 4;

function scriptOf(calls: number) {
  const turns = [];
  for (let done = 0; done < calls; done += TURN) {
    const n = Math.min(TURN, calls - done);
    turns.push({
      toolCalls: Array.from({ length: n }, () => ({ name: 'get_service_status', args: { service: 'api' } })),
    });
  }
  return [...turns, { text: 'status checked' }];
}

export async function autoOverhead(o: AutoOverheadOptions): Promise<AutoOverheadResult> {
  const bar = o.quiet ? undefined : new Progress(o.label ?? 'auto-tier overhead', o.repeats * 3);
  const finished = new Map<string, number>();
  const waiters = new Map<string, (at: number) => void>();
  const listener = (event: ProbeEvent) => {
    if (event.t !== 'done') return;
    const waiter = waiters.get(event.runId);
    if (waiter) waiter(event.at);
    else finished.set(event.runId, event.at);
  };
  o.worker.on('probe', listener);
  // Only the runs' ends are read here: the probe's per-call reports (an IPC write per tick) would count as overhead.
  o.worker.proc.send({ probeCalls: false });

  const pid = o.worker.proc.pid;
  const redis = new Redis(o.redisUrl);
  /** The worker's CPU used by each timed run (from before POST /runs to the run's `done`), and Redis's commands. */
  const cpu = new Map<unknown[], number[]>();
  const commands = new Map<unknown[], number[]>();
  const timeRun = async (script: unknown[]): Promise<number> => {
    const commandsBefore = await commandsServed(redis);
    const cpuBefore = pid === undefined ? undefined : cpuMsOf(pid);
    const wall = await timeOneRun(script);
    const cpuAfter = pid === undefined ? undefined : cpuMsOf(pid);
    commands.set(script, [...(commands.get(script) ?? []), (await commandsServed(redis)) - commandsBefore]);
    if (cpuBefore !== undefined && cpuAfter !== undefined)
      cpu.set(script, [...(cpu.get(script) ?? []), cpuAfter - cpuBefore]);
    return wall;
  };
  const timeOneRun = async (script: unknown[]): Promise<number> => {
    const start = wallNow();
    const res = await sendJson<{ runId: string }>(
      'POST',
      `${o.worker.url}/runs`,
      { agent: 'ops', input: 'bench auto calls', script },
      { authorization: `Bearer ${o.requesterToken}` },
    );
    if (res.status !== 202) throw new Error(`POST /runs answered ${res.status}: ${JSON.stringify(res.body)}`);
    const { runId } = res.body;
    const end =
      finished.get(runId) ??
      (await new Promise<number>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`run ${runId} did not finish in 60 s`)), 60_000);
        waiters.set(runId, (at) => {
          clearTimeout(timer);
          done(at);
        });
      }));
    return end - start;
  };

  const handler = opsTools(new InfraStore(redis, o.keyPrefix), { restartMs: 0, maxReplicas: 20 }).find(
    (t) => t.name === 'get_service_status',
  )!.handler;
  const ctx = { runId: 'direct', agent: 'ops', userId: 'alice', scopes: [], callId: 'direct' };
  const callDirect = o.callDirect ?? (async (args: { service: string }) => handler(args, ctx));
  const timeDirect = async (): Promise<number> => {
    const start = wallNow();
    for (let done = 0; done < o.calls; done += TURN) {
      const batch = Array.from({ length: Math.min(TURN, o.calls - done) }, () => ({ service: 'api' }));
      await mapWithConcurrency(batch, MAX_CONCURRENT_TOOLS, callDirect);
    }
    return wallNow() - start;
  };

  const callsScript = scriptOf(o.calls);
  const emptyScript = [{ text: 'nothing to do' }];
  const withCalls: number[] = [];
  const empty: number[] = [];
  const direct: number[] = [];
  try {
    // One unrecorded round of each warms the JIT and the connections.
    await timeOneRun(scriptOf(o.calls));
    await timeOneRun(emptyScript);
    await timeDirect();
    for (let r = 0; r < o.repeats; r++) {
      withCalls.push(await timeRun(callsScript));
      bar?.update(3 * r + 1);
      empty.push(await timeRun(emptyScript));
      bar?.update(3 * r + 2);
      direct.push(await timeDirect());
      bar?.update(3 * r + 3);
    }
  } finally {
    o.worker.proc.send({ probeCalls: true });
    o.worker.off('probe', listener);
    redis.disconnect();
    bar?.stop();
  }
  const runWithCallsMs = median(withCalls);
  const emptyRunMs = median(empty);
  const directCallsMs = median(direct);
  const perCallThroughWorkerMs = (runWithCallsMs - emptyRunMs) / o.calls;
  const directPerCallMs = directCallsMs / o.calls;
  return {
    calls: o.calls,
    repeats: o.repeats,
    runWithCallsMs,
    emptyRunMs,
    directCallsMs,
    perCallThroughWorkerMs,
    directPerCallMs,
    overheadPerCallMs: perCallThroughWorkerMs - directPerCallMs,
    ...(cpu.has(callsScript) && cpu.has(emptyScript)
      ? { workerCpuPerCallMs: (mean(cpu.get(callsScript)!) - mean(cpu.get(emptyScript)!)) / o.calls }
      : {}),
    redisCommandsPerCall: (mean(commands.get(callsScript)!) - mean(commands.get(emptyScript)!)) / o.calls,
  };
}

function mean(values: number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** Commands Redis served so far, INFO itself left out: the bench's one way to count them (measure.ts). */
async function commandsServed(redis: Redis): Promise<number> {
  return totalCalls(await commandCalls(redis));
}

// Full approval round trips: POST /runs → the worker parks the run → approval-requests → the approval
// service → an approver stand-in (inbox SSE + REST) POSTs "approve" → approval-decisions → a worker resumes
// the run and runs restart_service → the run completes.
import type { ApprovalView } from '@countersign/contracts';
import type { Child } from '../support/processes';
import { Flow } from '../support/flow';
import { getJson, openEventStream, sendJson } from '../support/http';
import type { Redis } from 'ioredis';
import { CostMeter, type PhaseCost } from '../support/cost';
import { Latencies, type LatencySummary, pool, Progress, sleep, wallNow } from '../support/measure';

export interface RoundTripOptions {
  label: string;
  runs: number;
  workers: Child[];
  approvalUrl: string;
  approverToken: string;
  /** Of the principal that starts the runs. */
  requesterToken: string;
  /** Runs in flight at once (closed loop: a lane starts its next run when its last one finished). */
  startConcurrency: number;
  /** Decision POSTs in flight at once (the approver stand-in). */
  decideConcurrency: number;
  /**
   * Open loop: runs started on a fixed schedule of this many per second, none waiting for another; the stand-in then
   * decides every request as soon as it hears of it. Without it, the closed loop of `startConcurrency` lanes.
   */
  openLoopRate?: number;
  quiet?: boolean;
  /** For INFO commandstats before and after: the server, or every master of a cluster. */
  redis: Redis | Redis[];
  /** CPU of the phase's processes, commands and bytes; @defaultValue commands and bytes of `redis` only */
  meter?: CostMeter;
  /** The tool whose handler ends "decision → tool" (the contract floor reports its own). @defaultValue restart_service */
  executedTool?: string;
}

export interface RoundTripFigures {
  runs: number;
  completed: number;
  failed: number;
  seconds: number;
  runsPerSecond: number;
  /** Stand-in starts its decision POST → the worker enters restart_service's handler. */
  decisionToExecution: LatencySummary;
  /** The decision POST itself, as the stand-in sees it. */
  decisionPost: LatencySummary;
  clockSkewNegatives: number;
  decisionErrors: number;
  /** Open loop only: how late the runs' starts were against their schedule (the driver falling behind shows here). */
  startLag?: LatencySummary;
}

export type RoundTripResult = RoundTripFigures & PhaseCost;

const ROUND_TRIP_TOOL = 'restart_service';
/** The scripted run: one confirm-tier call, then a final answer. */
export const ROUND_TRIP_SCRIPT = [
  { toolCalls: [{ name: ROUND_TRIP_TOOL, args: { service: 'api' } }] },
  { text: 'restarted' },
];

/** A request to decide, as the inbox's live stream and the list name it. */
interface Pending {
  requestId: string;
  callId: string;
}

export async function roundTrips(o: RoundTripOptions): Promise<RoundTripResult> {
  const bar = o.quiet ? undefined : new Progress(o.label, o.runs);
  const post = new Latencies();
  const queue: Pending[] = [];
  const seen = new Set<string>();
  let inFlight = 0;
  let decisionErrors = 0;
  const auth = { authorization: `Bearer ${o.approverToken}` };
  const flow = new Flow(
    o.runs,
    o.executedTool ?? ROUND_TRIP_TOOL,
    (done) => bar?.update(done),
    60_000,
    () => `(pending seen ${seen.size}, queued for decision ${queue.length})`,
  );
  flow.watch(o.workers);

  // Decided by request ID (as the inbox does); the flow matches executions by call ID.
  const decide = async ({ requestId, callId }: Pending, attempt = 0): Promise<void> => {
    const t0 = wallNow();
    flow.sentAt.set(callId, t0);
    const res = await sendJson(
      'POST',
      `${o.approvalUrl}/approvals/${requestId}/decisions`,
      { decision: 'approve' },
      auth,
    );
    post.recordMs(wallNow() - t0);
    flow.progressed();
    if (res.status === 200) return;
    if (res.status >= 500 && attempt < 5) return decide({ requestId, callId }, attempt + 1);
    decisionErrors++;
    if (decisionErrors <= 3)
      console.error(`[bench] decision ${callId}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  // In the open loop the approver answers every request as it hears of it, like the schedule starts every run.
  const decideLimit = o.openLoopRate ? Infinity : o.decideConcurrency;
  const pump = () => {
    while (inFlight < decideLimit && queue.length > 0) {
      const pending = queue.shift()!;
      inFlight++;
      void decide(pending)
        .catch((error: Error) => {
          decisionErrors++;
          console.error(`[bench] decision ${pending.callId}: ${error.message}`);
        })
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  const offer = (pending: Pending) => {
    if (seen.has(pending.requestId)) return;
    seen.add(pending.requestId);
    queue.push(pending);
    pump();
  };

  const stream = await openEventStream(`${o.approvalUrl}/inbox/events`, auth, (event, data) => {
    if (event !== 'change') return;
    const change = JSON.parse(data) as Pending & { status: string };
    if (change.status === 'pending') offer(change);
  });
  // Safety net for a missed live update: list what is pending when nothing moved for a while.
  let lastDone = 0;
  const sweep = setInterval(async () => {
    if (flow.done !== lastDone || flow.done >= o.runs) return void (lastDone = flow.done);
    const res = await getJson<ApprovalView[]>(
      `${o.approvalUrl}/approvals?status=pending&limit=500`,
      auth,
    ).catch(() => undefined);
    if (res?.status === 200) for (const a of res.body) offer(a.request);
  }, 2_000);

  const endMeter = await (o.meter ?? new CostMeter(o.redis)).begin();
  const startLag = new Latencies();
  try {
    flow.markStart();
    const startOne = async (i: number) => {
      const worker = o.workers[i % o.workers.length];
      const res = await sendJson<{ runId: string }>(
        'POST',
        `${worker.url}/runs`,
        { agent: 'ops', input: `bench round trip ${i}`, script: ROUND_TRIP_SCRIPT },
        { authorization: `Bearer ${o.requesterToken}` },
      );
      if (res.status !== 202)
        throw new Error(`POST /runs answered ${res.status}: ${JSON.stringify(res.body)}`);
      flow.progressed();
      await Promise.race([flow.runDone(res.body.runId), flow.finished]);
    };
    const starting = o.openLoopRate
      ? onSchedule(o.runs, o.openLoopRate, startLag, startOne)
      : pool(o.runs, o.startConcurrency, startOne);
    await Promise.all([starting, flow.finished]);
  } finally {
    clearInterval(sweep);
    stream.close();
    flow.close();
    bar?.stop();
  }
  return {
    runs: o.runs,
    ...(await endMeter(o.runs)),
    completed: flow.done - flow.failed,
    failed: flow.failed,
    seconds: flow.seconds,
    runsPerSecond: o.runs / flow.seconds,
    decisionToExecution: flow.decisionToExecution.summary(),
    decisionPost: post.summary(),
    clockSkewNegatives: flow.decisionToExecution.negatives,
    decisionErrors,
    ...(o.openLoopRate ? { startLag: startLag.summary() } : {}),
  };
}

/**
 * Starts run i at `i / rate` seconds after the first, whatever the runs before it are doing (open loop), and
 * records how late each start was. Resolves when every started run has finished.
 */
async function onSchedule(
  runs: number,
  rate: number,
  lag: Latencies,
  start: (i: number) => Promise<void>,
): Promise<void> {
  const t0 = wallNow();
  const started: Promise<void>[] = [];
  for (let i = 0; i < runs; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - wallNow();
    if (wait > 0) await sleep(wait);
    lag.recordMs(wallNow() - due);
    const run = start(i);
    run.catch(() => undefined); // reported by the Promise.all below, not as an unhandled rejection meanwhile
    started.push(run);
  }
  await Promise.all(started);
}

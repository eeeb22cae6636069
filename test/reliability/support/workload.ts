// The runs the scenarios start and how their outcome is checked against the simulated infrastructure:
// every call restarts its own service, so that service's restart count is the call's execution count.
import { randomBytes } from 'node:crypto';
import { type ApprovalRequest, jobIds, type StartRunJob } from '@countersign/contracts';
import { runKey } from '../../../apps/agent-worker/src/runs/run-keys';
import { unitHash, type Verdict } from './decision-desk';
import type { Deployment } from './deployment';
import type { ScenarioTally } from './scenario-tally';
import { restartCounts, type WorkerProcess } from './worker-processes';

export interface PlannedCall {
  callId: string;
  service: string;
}

export interface PlannedRun {
  runId: string;
  calls: PlannedCall[];
}

/**
 * `count` runs; each turn has one auto call and one or two confirm calls (two for every other run, so a
 * frontier is completed by whichever of its decisions arrives last), then a final text.
 */
export function planRuns(count: number, label = 'r'): { runs: PlannedRun[]; jobs: StartRunJob[] } {
  const tag = randomBytes(3).toString('hex');
  const runs: PlannedRun[] = [];
  const jobs: StartRunJob[] = [];
  for (let i = 0; i < count; i++) {
    const runId = `${label}${tag}-${i}`;
    const calls = (i % 2 ? ['a', 'b'] : ['a']).map((k) => ({
      callId: `${runId}-${k}`,
      service: `${runId}-${k}`,
    }));
    runs.push({ runId, calls });
    jobs.push({
      runId,
      agent: 'ops',
      userId: 'alice',
      input: 'restart what needs restarting',
      scopes: [],
      script: [
        {
          toolCalls: [
            { id: `${runId}-s`, name: 'get_service_status', args: { service: 'api' } },
            ...calls.map((c) => ({ id: c.callId, name: 'restart_service', args: { service: c.service } })),
          ],
        },
        { text: 'done' },
      ],
    });
  }
  return { runs, jobs };
}

/** About one call in five is denied; the same call always gets the same verdict. */
export function mostlyApprove(request: Pick<ApprovalRequest, 'callId'>): Verdict {
  return unitHash(`verdict:${request.callId}`) < 0.2 ? 'deny' : 'approve';
}

export interface Expectation {
  /** The verdict the call finally got. */
  verdict: (call: PlannedCall) => Verdict;
  /** How many approved attempts of the call were interrupted (a worker died while it executed). */
  interrupted?: (call: PlannedCall) => number;
  /** Model turns of a completed run (its tool-call turns and the final text). @defaultValue 2 */
  modelTurns?: number;
}

/**
 * Tallies every run: lost when it did not complete, executed wrongly when a denied call ran or an
 * approved call ran other than once per approved attempt (an interrupted attempt may have run or not:
 * the worker can die before or after the tool started, never more than once per attempt).
 */
export async function checkRuns(
  deployment: Deployment,
  via: WorkerProcess,
  runs: PlannedRun[],
  expect: Expectation,
  tally: ScenarioTally,
): Promise<void> {
  const states = await deployment.runStates(
    runs.map((r) => r.runId),
    true,
  );
  const restarts = await restartCounts(via);
  await dumpLost(deployment, runs.filter((_, i) => states[i].status !== 'completed').slice(0, 3));
  runs.forEach((run, i) => {
    tally.case();
    const state = states[i];
    if (state.status !== 'completed') {
      tally.lostRun(`${run.runId}: ${state.status ?? 'missing'}`);
    } else tally.completed++;
    const messages = state.messages
      ? (JSON.parse(state.messages) as { role: string; toolCallId?: string; content: string | null }[])
      : [];
    const turns = expect.modelTurns ?? 2;
    if (state.status === 'completed' && messages.filter((m) => m.role === 'assistant').length !== turns)
      tally.wronglyExecuted(`${run.runId}: the model did not get exactly one follow-up turn per park`);
    for (const call of run.calls) {
      const ran = restarts.get(call.service) ?? 0;
      const verdict = expect.verdict(call);
      const interrupted = expect.interrupted?.(call) ?? 0;
      const told = messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId)?.content ?? '';
      if (verdict === 'deny') {
        tally.refusedAsExpected();
        if (ran > 0) tally.wronglyExecuted(`${call.callId}: denied but ran ${ran}x`);
        if (state.status === 'completed' && !/denied/i.test(told))
          tally.wronglyExecuted(`${call.callId}: denied but the model was told ${JSON.stringify(told)}`);
      } else {
        if (ran > 1 + interrupted || ran < 1)
          (ran < 1 ? tally.lostRun.bind(tally) : tally.wronglyExecuted.bind(tally))(
            `${call.callId}: approved (${interrupted} interrupted attempt(s)) but ran ${ran}x`,
          );
        if (state.status === 'completed' && /denied/i.test(told))
          tally.wronglyExecuted(`${call.callId}: approved but the model was told it was denied`);
      }
    }
  });
}

/** What a lost run looks like in Redis, printed for the report (header without messages, and its frontier). */
async function dumpLost(deployment: Deployment, lost: PlannedRun[]): Promise<void> {
  for (const run of lost) {
    const meta = await deployment.redis.hgetall(runKey(deployment.prefixes.keyPrefix, run.runId));
    delete meta.messages;
    delete meta.script;
    const calls = Object.fromEntries(Object.entries(meta).filter(([field]) => field.startsWith('c:')));
    for (const field of Object.keys(calls)) delete meta[field];
    const jobs = await Promise.all(
      run.calls.map(async (c) => {
        // The decision job of the request the call waits for (its body's `rq`), if any.
        const body = calls[`c:${c.callId}`];
        const requestId = body ? (JSON.parse(body) as { rq?: string }).rq : undefined;
        const decisions = deployment.decisionShards[deployment.shardOf(run.runId)];
        const job = requestId ? await decisions.getJob(jobIds.decision(requestId)) : undefined;
        return {
          callId: c.callId,
          requestId,
          decisionJob: job ? await job.getState() : 'none',
          failed: job?.failedReason,
        };
      }),
    );
    const start = await deployment.runShards[deployment.shardOf(run.runId)].getJob(
      jobIds.startRun(run.runId),
    );
    process.stdout.write(
      `[reliability]   lost ${run.runId}: ${JSON.stringify({ meta, calls, jobs, start: start ? { state: await start.getState(), failed: start.failedReason, attempts: start.attemptsMade } : 'none' })}\n`,
    );
  }
}

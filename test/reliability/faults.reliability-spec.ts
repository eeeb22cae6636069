// Faults: worker processes killed with SIGKILL while runs are parked, while decisions are being applied
// and while approved tools execute, then restarted; a decision job that parks its run again killed (or its publish
// failing) between the park and the publish; and the Redis server itself killed (AOF, fsync always)
// and restarted with runs parked, also with the approval service holding their requests. Every run ends; no
// approved call runs more than once per approved attempt (counted on /demo/infra); every call a dead worker was
// executing is asked about again; every parked call's request reaches an approver.
import { randomBytes } from 'node:crypto';
import type { ApprovalView, StartRunJob } from '@countersign/contracts';
import { unpublishedRequestsKey } from '../../apps/agent-worker/src/runs/run-keys';
import type { RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { decideAllThroughApi, pendingApprovals, startApprovalServiceFor } from './support/approval-desk';
import { DecisionDesk } from './support/decision-desk';
import { Deployment } from './support/deployment';
import { type OwnRedisServer, startDurableRedis } from './support/redis-servers';
import { ScenarioTally } from './support/scenario-tally';
import { agentsConfigWith } from './support/worker-processes';
import { checkRuns, mostlyApprove, type PlannedCall, type PlannedRun, planRuns } from './support/workload';
import { bearer } from '../support/principals';
import { waitFor } from '../support/redis';

/** Short locks so a killed worker's jobs are redelivered within a second or two. */
const FAST_RECOVERY = { LOCK_DURATION_MS: '1500', STALLED_INTERVAL_MS: '500' };

async function parkAll(deployment: Deployment, desk: DecisionDesk, calls: number): Promise<void> {
  await waitFor(() => desk.requests.length >= calls, `${calls} approval requests`, 60_000, 50);
}

/** Attempts of a call that were asked again because a worker died while executing it. */
const interruptedOf = (desk: DecisionDesk) => (call: PlannedCall) =>
  desk.requests.filter((r) => r.callId === call.callId && r.reason === 'interrupted').length;

/** How often the workers of the park-and-publish scenarios sweep for unpublished requests. */
const REQUEST_SWEEP_MS = 1_000;

/**
 * Runs of two turns, one restart each (of its own service): the second turn parks inside the job of the first
 * call's decision, which is where the park-and-publish faults strike.
 */
function twoTurnRuns(count: number, label: string): { runs: PlannedRun[]; jobs: StartRunJob[] } {
  const tag = randomBytes(3).toString('hex');
  const runs: PlannedRun[] = [];
  const jobs: StartRunJob[] = [];
  for (let i = 0; i < count; i++) {
    const runId = `${label}${tag}-${i}`;
    const calls = ['1', '2'].map((turn) => ({ callId: `${runId}-t${turn}`, service: `${runId}-t${turn}` }));
    runs.push({ runId, calls });
    jobs.push({
      runId,
      agent: 'ops',
      userId: 'alice',
      input: 'restart one, then the other',
      scopes: [],
      script: [
        ...calls.map((c) => ({
          toolCalls: [{ id: c.callId, name: 'restart_service', args: { service: c.service } }],
        })),
        { text: 'done' },
      ],
    });
  }
  return { runs, jobs };
}

/** Waits until the approval service lists a pending request for each of `callIds`; returns them. */
function pendingFor(approvalsUrl: string, callIds: string[], timeoutMs = 60_000): Promise<ApprovalView[]> {
  return waitFor(
    async () => {
      const pending = await pendingApprovals(approvalsUrl);
      const found = callIds.map((id) => pending.find((p) => p.request.callId === id));
      return found.every(Boolean) ? (found as ApprovalView[]) : undefined;
    },
    `${callIds.length} pending requests`,
    timeoutMs,
    50,
  );
}

async function approveThroughApi(approvalsUrl: string, views: ApprovalView[]): Promise<void> {
  for (const { request } of views) {
    const res = await fetch(`${approvalsUrl}/approvals/${request.requestId}/decisions`, {
      method: 'POST',
      headers: { ...bearer('bob'), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    // 409: asked again meanwhile (a killed worker was running it), or already decided: the desk decides the rest.
    if (res.status !== 200 && res.status !== 409)
      throw new Error(`vote on ${request.callId} answered ${res.status}: ${await res.text()}`);
  }
}

describe('faults', () => {
  it('kill -9 of every worker while runs are parked: a restarted fleet resumes every run', async () => {
    const tally = new ScenarioTally('kill -9 while runs are parked');
    const deployment = new Deployment('fault-parked');
    const desk = new DecisionDesk(deployment, { plan: mostlyApprove, duplicateShare: 0.2 });
    try {
      const { runs, jobs } = planRuns(40, 'P');
      const calls = runs.flatMap((r) => r.calls);
      await deployment.addServices(calls.map((c) => c.service));
      const workers = await deployment.startWorkers(2, FAST_RECOVERY);
      desk.paused = true;
      desk.start();
      await deployment.startRuns(jobs);
      await parkAll(deployment, desk, calls.length);

      await Promise.all(workers.map((w) => w.kill()));
      await Promise.all(workers.map((w) => w.restart()));
      desk.paused = false;
      await deployment.waitForRunsToFinish(runs.map((r) => r.runId));
      await checkRuns(
        deployment,
        workers[0],
        runs,
        { verdict: mostlyApprove, interrupted: interruptedOf(desk) },
        tally,
      );
      expect(desk.requests.filter((r) => r.attempt > 0)).toEqual([]); // nothing was executing: nothing re-asked
      tally.expectClean();
    } finally {
      await desk.close();
      await deployment.close();
    }
  });

  it('kill -9 of a worker while decisions are being applied: runs end, calls run at most once per approval', async () => {
    const tally = new ScenarioTally('kill -9 while decisions are applied');
    const deployment = new Deployment('fault-applying');
    const desk = new DecisionDesk(deployment, { plan: mostlyApprove, duplicateShare: 0.2, batch: 50 });
    try {
      const { runs, jobs } = planRuns(300, 'A');
      const calls = runs.flatMap((r) => r.calls);
      await deployment.addServices(calls.map((c) => c.service));
      const workers = await deployment.startWorkers(2, FAST_RECOVERY);
      desk.paused = true;
      desk.start();
      await deployment.startRuns(jobs);
      await parkAll(deployment, desk, calls.length);

      desk.paused = false;
      // Kill one worker as soon as decisions are flowing (some runs already completed), the other a bit later.
      const runIds = runs.map((r) => r.runId);
      const completed = async () =>
        (await deployment.runStates(runIds)).filter((s) => s.status === 'completed').length;
      await waitFor(async () => (await completed()) >= 30, 'decisions to flow', 60_000, 10);
      await workers[0].kill();
      await waitFor(async () => (await completed()) >= 120, 'more decisions to flow', 60_000, 10);
      await workers[1].kill();
      await Promise.all(workers.map((w) => w.restart()));

      await deployment.waitForRunsToFinish(runIds);
      await checkRuns(
        deployment,
        workers[0],
        runs,
        { verdict: mostlyApprove, interrupted: interruptedOf(desk) },
        tally,
      );
      tally.expectClean();
    } finally {
      await desk.close();
      await deployment.close();
    }
  });

  it('kill -9 of the worker while approved tools execute: each interrupted call is asked again, never re-run on its own', async () => {
    const tally = new ScenarioTally('kill -9 while approved tools execute');
    const deployment = new Deployment('fault-executing');
    // Everything approved; restarts take 4 s, so the kill lands inside them.
    const desk = new DecisionDesk(deployment, { duplicateShare: 0.2 });
    try {
      const { runs, jobs } = planRuns(12, 'X');
      const calls = runs.flatMap((r) => r.calls);
      await deployment.addServices(calls.map((c) => c.service));
      const [worker] = await deployment.startWorkers(1, {
        ...FAST_RECOVERY,
        AGENTS_CONFIG: agentsConfigWith({ restartMs: 4_000 }),
      });
      desk.start();
      await deployment.startRuns(jobs);
      const executing = await waitFor(
        async () => {
          const busy = (await worker.infra()).services.filter((s) => s.status === 'restarting');
          return busy.length >= 3 ? busy.map((s) => s.name) : undefined;
        },
        'approved restarts in flight',
        60_000,
        20,
      );
      await worker.kill();
      // What a person sees: the restarts the dead worker started were counted, and nothing else ran meanwhile.
      const before = await deployment.redis.hgetall(`{${deployment.prefixes.keyPrefix}:infra}:services`);
      await worker.restart();

      await deployment.waitForRunsToFinish(runs.map((r) => r.runId));
      const interrupted = interruptedOf(desk);
      for (const name of executing) {
        tally.case();
        const call = calls.find((c) => c.service === name)!;
        if (interrupted(call) >= 1)
          tally.refusedAsExpected(); // re-asked instead of re-run
        else tally.wronglyExecuted(`${name} was executing when the worker died but was not asked again`);
        if (Number(before[`${name}:restarts`]) !== 1)
          tally.wronglyExecuted(`${name} ran ${before[`${name}:restarts`]}x before the re-ask`);
      }
      await checkRuns(deployment, worker, runs, { verdict: () => 'approve', interrupted }, tally);
      tally.expectClean();
    } finally {
      await desk.close();
      await deployment.close();
    }
  });

  describe('a decision job that parks its run again, faulted between the park and the publish', () => {
    it.each([
      ['kill -9 of the worker', 'decision-park-then-kill', {}],
      // No retry left (DECISION_ATTEMPTS=1): only the request sweep can publish it.
      ['a failing Queue.add, no retry left', 'decision-park-then-fail-publish', { DECISION_ATTEMPTS: '1' }],
    ])(
      '%s: the request reaches an approver within lock + sweep interval; each call runs once, each run completes',
      async (what, fault, approvalEnv) => {
        const tally = new ScenarioTally(`${what} between park and publish`);
        const deployment = new Deployment(`fault-${fault}`);
        let approvals: RunningApprovalService | undefined;
        try {
          const { runs, jobs } = twoTurnRuns(6, fault.endsWith('kill') ? 'K' : 'Q');
          const runIds = runs.map((r) => r.runId);
          await deployment.addServices(runs.flatMap((r) => r.calls.map((c) => c.service)));
          const [worker] = await deployment.startWorkers(1, {
            ...FAST_RECOVERY,
            REQUEST_SWEEP_MS: String(REQUEST_SWEEP_MS),
            COUNTERSIGN_TEST_FAULTS: fault,
          });
          approvals = await startApprovalServiceFor(deployment, approvalEnv);
          const service = approvals;
          await deployment.startRuns(jobs);
          await approveThroughApi(
            service.url,
            await pendingFor(
              service.url,
              runs.map((r) => r.calls[0].callId),
            ),
          );

          // The fault strikes in the first decision job that parks its run on the second turn, leaving that turn's
          // request unpublished. From the moment a worker can act again (the killed one restarted without the fault;
          // the failed job failed for good), it reaches the approval service within the lock duration plus the
          // sweep interval.
          let faulted: string[];
          let since: number;
          if (fault.endsWith('kill')) {
            await worker.exited();
            // Nothing runs now: what the index holds is what the dead job never published.
            const index = unpublishedRequestsKey(deployment.prefixes.keyPrefix);
            faulted = (await deployment.redis.zrange(index, 0, -1)).map((m) => m.split('|')[1]);
            await worker.restart({ COUNTERSIGN_TEST_FAULTS: '' });
            since = Date.now();
          } else {
            const failed = await waitFor(
              async () =>
                (await deployment.decisions.getJobs(['failed'])).find((j) =>
                  /injected fault/.test(j.failedReason ?? ''),
                ),
              'the decision job whose publish failed to fail for good',
              60_000,
              50,
            );
            faulted = [
              runs.find((r) => r.runId === (failed.data as { runId: string }).runId)!.calls[1].callId,
            ];
            since = failed.finishedOn!;
          }
          // A kill can land while another job, running beside the one that struck, has parked and not yet published:
          // every request the dead process left unpublished must reach the approver within the bound. A failed job
          // leaves its own one.
          if (fault.endsWith('kill')) expect(faulted.length).toBeGreaterThanOrEqual(1);
          else expect(faulted).toHaveLength(1);
          await pendingFor(service.url, faulted);
          const reachedMs = Date.now() - since;
          const boundMs = Number(FAST_RECOVERY.LOCK_DURATION_MS) + REQUEST_SWEEP_MS;
          process.stdout.write(
            `[reliability]   ${what}: the unpublished request reached the approver ${reachedMs} ms after ` +
              `recovery (lock ${FAST_RECOVERY.LOCK_DURATION_MS} + sweep ${REQUEST_SWEEP_MS} = ${boundMs} ms)\n`,
          );
          // The bound, plus what the test adds: the stalled check's interval, the approval service's intake, polling.
          expect(reachedMs).toBeLessThan(boundMs + Number(FAST_RECOVERY.STALLED_INTERVAL_MS) + 2_000);

          // Everything is decided (approve), including what a killed worker was running (asked again), until every
          // run ends: each call ran once per approved attempt, and each run completed after three model turns.
          await decideAllThroughApi(service.url, deployment, runIds, () => 'approve', tally);
          const decided = await pendingApprovals(service.url, 'decided');
          const interrupted = (call: PlannedCall) =>
            decided.filter((v) => v.request.callId === call.callId && v.request.reason === 'interrupted')
              .length;
          await checkRuns(
            deployment,
            worker,
            runs,
            { verdict: () => 'approve', interrupted, modelTurns: 3 },
            tally,
          );
          expect(await pendingApprovals(service.url)).toEqual([]);
          tally.expectClean();
        } finally {
          await approvals?.close();
          await deployment.close();
        }
      },
    );
  });

  describe('Redis killed (-9) and restarted with runs parked', () => {
    let redis: OwnRedisServer;
    beforeAll(async () => {
      redis = await startDurableRedis();
    });
    afterAll(() => redis?.stop());

    it('loses nothing: every parked run resumes after Redis replays its AOF', async () => {
      const tally = new ScenarioTally('Redis kill -9 + restart (AOF, fsync always)');
      const deployment = new Deployment('fault-redis', { url: redis.url, owned: true });
      const desk = new DecisionDesk(deployment, { plan: mostlyApprove, duplicateShare: 0.2 });
      try {
        const { runs, jobs } = planRuns(40, 'R');
        const calls = runs.flatMap((r) => r.calls);
        await deployment.addServices(calls.map((c) => c.service));
        const workers = await deployment.startWorkers(2, FAST_RECOVERY);
        desk.paused = true;
        desk.start();
        await deployment.startRuns(jobs);
        await parkAll(deployment, desk, calls.length);

        // While Redis is down, health says so at once (it does not wait on the clients' reconnect attempts).
        await redis.kill();
        try {
          for (const w of workers) {
            const res = await fetch(`${w.url}/health`, { signal: AbortSignal.timeout(3_000) });
            expect({ status: res.status, body: await res.json() }).toMatchObject({
              status: 503,
              body: { redis: 'down' },
            });
          }
        } finally {
          await redis.restart();
        }
        await waitFor(
          async () => (await Promise.all(workers.map((w) => fetch(`${w.url}/health`)))).every((r) => r.ok),
          'workers healthy again',
          30_000,
          100,
        );
        const parked = await deployment.runStates(runs.map((r) => r.runId));
        expect(parked.filter((s) => s.status !== 'awaiting_confirmation')).toEqual([]);

        desk.paused = false;
        await deployment.waitForRunsToFinish(runs.map((r) => r.runId));
        await checkRuns(
          deployment,
          workers[0],
          runs,
          { verdict: mostlyApprove, interrupted: interruptedOf(desk) },
          tally,
        );
        tally.expectClean();
      } finally {
        await desk.close();
        await deployment.close();
      }
    });

    it('loses nothing the approval service holds: every pending request and parked run survives, each decided once', async () => {
      const tally = new ScenarioTally('Redis kill -9 + restart with the approval service (AOF)');
      const deployment = new Deployment('fault-redis-approvals', { url: redis.url, owned: true });
      let approvals: RunningApprovalService | undefined;
      try {
        const { runs, jobs } = planRuns(40, 'S');
        const runIds = runs.map((r) => r.runId);
        const callIds = runs.flatMap((r) => r.calls.map((c) => c.callId)).sort();
        await deployment.addServices(runs.flatMap((r) => r.calls.map((c) => c.service)));
        const workers = await deployment.startWorkers(2, FAST_RECOVERY);
        approvals = await startApprovalServiceFor(deployment);
        const service = approvals;
        const pendingCallIds = async () =>
          (await pendingApprovals(service.url)).map((p) => p.request.callId).sort();
        await deployment.startRuns(jobs);
        await waitFor(
          async () => (await pendingCallIds()).join() === callIds.join(),
          `${callIds.length} pending approvals`,
          60_000,
          100,
        );

        await redis.restart();
        await waitFor(
          async () =>
            (
              await Promise.all(
                [...workers.map((w) => w.url), service.url].map((url) => fetch(`${url}/health`)),
              )
            ).every((r) => r.ok),
          'workers and approval service healthy again',
          30_000,
          100,
        );
        expect(await pendingCallIds()).toEqual(callIds);
        const parked = await deployment.runStates(runIds);
        expect(parked.filter((s) => s.status !== 'awaiting_confirmation')).toEqual([]);

        await decideAllThroughApi(service.url, deployment, runIds, mostlyApprove, tally, {
          duplicateShare: 0.2,
        });
        await checkRuns(deployment, workers[0], runs, { verdict: mostlyApprove }, tally);
        tally.expectClean();
        expect(await pendingCallIds()).toEqual([]);
      } finally {
        await approvals?.close();
        await deployment.close();
      }
    });

    it('a worker told to stop while Redis is down exits after SHUTDOWN_TIMEOUT_MS instead of waiting for Redis', async () => {
      const deployment = new Deployment('fault-redis-stop', { url: redis.url, owned: true });
      try {
        const [worker] = await deployment.startWorkers(1, { SHUTDOWN_TIMEOUT_MS: '1000' });
        await redis.kill();
        try {
          const started = Date.now();
          const exit = await worker.stop();
          // Exit code 1 of its own (not the test's SIGKILL after 15 s), about a second after SIGTERM.
          expect(exit).toEqual({ code: 1, signal: null });
          expect(Date.now() - started).toBeLessThan(10_000);
        } finally {
          await redis.restart();
        }
      } finally {
        await deployment.close();
      }
    });
  });
});

// Faults: worker processes killed with SIGKILL while runs are parked, while decisions are being applied
// and while approved tools execute, then restarted; and the Redis server itself killed (AOF, fsync always)
// and restarted with runs parked, also with the approval service holding their requests. Every run ends; no
// approved call runs more than once per approved attempt (counted on /demo/infra); every call a dead worker was
// executing is asked about again.
import type { RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { decideAllThroughApi, pendingApprovals, startApprovalServiceFor } from './support/approval-desk';
import { DecisionDesk } from './support/decision-desk';
import { Deployment } from './support/deployment';
import { type OwnRedisServer, startDurableRedis } from './support/redis-servers';
import { ScenarioTally } from './support/scenario-tally';
import { agentsConfigWith } from './support/worker-processes';
import { checkRuns, mostlyApprove, type PlannedCall, planRuns } from './support/workload';
import { waitFor } from '../support/redis';

/** Short locks so a killed worker's jobs are redelivered within a second or two. */
const FAST_RECOVERY = { LOCK_DURATION_MS: '1500', STALLED_INTERVAL_MS: '500' };

async function parkAll(deployment: Deployment, desk: DecisionDesk, calls: number): Promise<void> {
  await waitFor(() => desk.requests.length >= calls, `${calls} approval requests`, 60_000, 50);
}

/** Attempts of a call that were asked again because a worker died while executing it. */
const interruptedOf = (desk: DecisionDesk) => (call: PlannedCall) =>
  desk.requests.filter((r) => r.callId === call.callId && r.reason === 'interrupted').length;

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

// Runbooks and a Redis killed (-9) and restarted from its AOF (fsync always): a runbook parked inside a sub-runbook
// resumes after the replay, and every step runs exactly once (audit entries and restart counts say what ran).
import { JobName, type RunView } from '@countersign/contracts';
import { signedDecision } from '../support/agent-worker-harness';
import { bearer } from '../support/principals';
import { waitFor } from '../support/redis';
import { Deployment } from './support/deployment';
import { type OwnRedisServer, startDurableRedis } from './support/redis-servers';

describe('runbooks across a Redis restart', () => {
  let redis: OwnRedisServer;
  beforeAll(async () => {
    redis = await startDurableRedis();
  });
  afterAll(() => redis?.stop());

  it('resumes a runbook parked in a sub-runbook after Redis replays its AOF; each step runs once', async () => {
    const deployment = new Deployment('runbook-aof', { url: redis.url, owned: true });
    try {
      const [worker] = await deployment.startWorkers(1, { RUNBOOKS_DIR: 'test/support/runbooks' });
      const started = await fetch(`${worker.url}/runbooks/rollout/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer('alice') },
        body: JSON.stringify({ input: { service: 'api' } }),
      });
      const { runId } = (await started.json()) as { runId: string };
      const view = async () =>
        (await (await fetch(`${worker.url}/runs/${runId}`, { headers: bearer('alice') })).json()) as RunView;
      const parked = await waitFor(async () => {
        const v = await view();
        return v.status === 'awaiting_confirmation' ? v : undefined;
      }, 'the runbook to park');
      const [call] = parked.pending;
      expect(call.callId).toBe('rb.restart.restart@1');

      await redis.kill();
      await redis.restart();
      await waitFor(
        async () => (await fetch(`${worker.url}/health`)).ok,
        'the worker healthy again',
        30_000,
        100,
      );
      expect((await view()).status).toBe('awaiting_confirmation');

      const decision = signedDecision(runId, call, 'approve');
      await deployment.decisions.add(JobName.Decision, decision);
      const done = await waitFor(async () => {
        const v = await view();
        return v.status === 'completed' ? v : undefined;
      }, 'the runbook to complete');
      expect(done.runbook?.nodes.every((n) => n.status === 'done')).toBe(true);

      const executed = (await deployment.audit.read({ runId }))
        .filter((e) => e.type === 'tool.executed')
        .map((e) => e.callId)
        .sort();
      expect(executed).toEqual(['rb.check@1', 'rb.done@1', 'rb.restart.restart@1', 'rb.restart.verify@1']);
      const infra = (await (
        await fetch(`${worker.url}/demo/infra`, { headers: bearer('alice') })
      ).json()) as {
        services: { name: string; restarts: number }[];
      };
      expect(infra.services.find((s) => s.name === 'api')?.restarts).toBe(1);
    } finally {
      await deployment.close();
    }
  });
});

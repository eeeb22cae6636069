// A worker started as a deployment would start it (no demo settings) seeds no simulated infrastructure and serves no
// /demo/infra; the demo, `npm start` and the compose file turn it on with SEED_DEMO_INFRA=true.
import { Redis } from 'ioredis';
import { startAgentWorker, type RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { infraKeys } from '@countersign/demo-infra';
import { workerEnv } from '../support/agent-worker-harness';
import { bearer } from '../support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from '../support/redis';

describe('SEED_DEMO_INFRA', () => {
  const prefixes = uniquePrefixes('worker-defaults');
  const redis = new Redis(TEST_REDIS_URL);
  const workers: RunningAgentWorker[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await redis.quit();
    await deletePrefixedKeys(prefixes);
  });

  async function start(env: Record<string, string>): Promise<RunningAgentWorker> {
    const worker = await startAgentWorker(env, { port: 0, host: '127.0.0.1' });
    workers.push(worker);
    return worker;
  }

  it('is off by default: no /demo/infra, and nothing seeded', async () => {
    const { SEED_DEMO_INFRA: _demo, ...deployment } = workerEnv(prefixes);
    const worker = await start(deployment);
    expect((await fetch(`${worker.url}/demo/infra`, { headers: bearer('alice') })).status).toBe(404);
    expect(await redis.exists(infraKeys(prefixes.keyPrefix).services)).toBe(0);
  });

  it('seeds and serves the simulated infrastructure when set to true', async () => {
    const worker = await start(workerEnv(prefixes, { SEED_DEMO_INFRA: 'true' }));
    const res = await fetch(`${worker.url}/demo/infra`, { headers: bearer('alice') });
    expect(res.status).toBe(200);
    const infra = (await res.json()) as { services: { name: string }[] };
    expect(infra.services.map((s) => s.name)).toContain('payments');
  });
});

// Load: three worker processes, RELIABILITY_RUNS runs (default 10,000), decisions in random order, about
// one in ten delivered twice. Every run completes, every approved call runs exactly once and every denied
// call never.
import { SHARED_REDIS } from './support/deployment';
import { loadScenario, RUNS } from './support/load-scenario';

describe('load', () => {
  it(`completes ${RUNS} runs on 3 worker processes (one Redis) with every approved call executed exactly once`, async () => {
    await loadScenario('load, one Redis', SHARED_REDIS, RUNS);
  });
});

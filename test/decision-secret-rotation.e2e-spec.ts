// Rotating DECISION_SIGNING_SECRET without refusing a decision in between: a worker given the new secret and the
// previous one accepts decisions signed with either (the approval services switch after the workers), and nothing else.
import type { RunningAgentWorker } from '../apps/agent-worker/src/bootstrap';
import { restartScript, TEST_SECRET, WorkerHarness } from './support/agent-worker-harness';

const NEW_SECRET = 'rotated-decision-secret-0123456789';

const h = new WorkerHarness('rotation');
let worker: RunningAgentWorker;
beforeAll(async () => {
  worker = await h.startWorker({
    DECISION_SIGNING_SECRET: NEW_SECRET,
    DECISION_SIGNING_PREVIOUS_SECRET: TEST_SECRET,
  });
});
afterAll(() => h.cleanup());

it.each([
  ['the new secret', NEW_SECRET, 'completed'],
  ['the previous secret', TEST_SECRET, 'completed'],
  ['any other secret', 'some-other-secret-0123456789', 'failed'],
])('a decision signed with %s (%s) → the decision job %s', async (_what, secret, outcome) => {
  const before = await h.restarts(worker.url, 'api');
  const runId = await h.startRun(worker.url, { script: restartScript('api') });
  const [call] = await h.waitForPending(worker.url, runId);
  const job = await h.publishDecision(h.decision(runId, call, 'approve', {}, secret));
  expect(await h.settled(job)).toBe(outcome);
  if (outcome === 'completed') {
    await h.waitForStatus(worker.url, runId, 'completed');
    expect(await h.restarts(worker.url, 'api')).toBe(before + 1);
  } else {
    expect((await h.run(worker.url, runId)).status).toBe('awaiting_confirmation');
    expect(await h.restarts(worker.url, 'api')).toBe(before);
  }
});

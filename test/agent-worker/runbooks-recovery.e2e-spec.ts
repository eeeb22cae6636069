// Runbooks survive workers killed with SIGKILL: parked between nodes, a new worker resumes the runbook and no finished
// step runs again; killed between two auto steps, it resumes from the last checkpointed turn; killed while an approved
// step of a sub-runbook executes, the step is marked interrupted and asked about again, never re-run on its own.
// Restart counts on /demo/infra and audit entries count what ran.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { post, WorkerHarness } from '../support/agent-worker-harness';
import { waitFor } from '../support/redis';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(60_000);

const RUNBOOKS = { RUNBOOKS_DIR: 'test/support/runbooks' };

/** The test agents config with restarts that take `restartMs` (so a worker can be killed mid-restart). */
function slowRestarts(restartMs: number): string {
  const config = JSON.parse(readFileSync(join(__dirname, '../support/agents.json'), 'utf8'));
  config.agents.ops.infra = { ...config.agents.ops.infra, restartMs };
  const file = join(mkdtempSync(join(tmpdir(), 'cs-runbook-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe('runbooks after kill -9', () => {
  const h = new WorkerHarness('runbook-kill');
  let child: ChildProcess | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await h.cleanup();
  });

  async function startRunbook(
    url: string,
    name: string,
    input: Record<string, unknown> = {},
  ): Promise<string> {
    const response = await post(`${url}/runbooks/${name}/runs`, { input });
    if (response.status !== 202)
      throw new Error(`answered ${response.status}: ${JSON.stringify(response.body)}`);
    return (response.body as { runId: string }).runId;
  }

  async function executions(runId: string, callId: string): Promise<number> {
    return (await h.audit.read({ runId })).filter((e) => e.type === 'tool.executed' && e.callId === callId)
      .length;
  }

  async function kill(proc: ChildProcess): Promise<void> {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  it('resumes a runbook parked between nodes on a new worker; finished steps do not run again', async () => {
    const spawned = await spawnWorker(h, { ...RUNBOOKS });
    child = spawned.process;
    const before = await h.restarts(spawned.url, 'web');
    const runId = await startRunbook(spawned.url, 'rollout');
    const [call] = await h.waitForPending(spawned.url, runId);
    expect(call.callId).toBe('rb.restart.restart@1');
    expect(await executions(runId, 'rb.check@1')).toBe(1);
    await kill(spawned.process);

    const rescuer = await h.startWorker(RUNBOOKS);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    const done = await h.waitForStatus(rescuer.url, runId, 'completed');
    expect(await h.restarts(rescuer.url, 'web')).toBe(before + 1);
    for (const step of ['rb.check@1', 'rb.restart.restart@1', 'rb.restart.verify@1', 'rb.done@1'])
      expect(await executions(runId, step)).toBe(1);
    expect(done.runbook?.nodes.every((n) => n.status === 'done')).toBe(true);
    await rescuer.close();
  });

  it('resumes a runbook killed between auto steps from its last checkpointed turn; earlier steps run once', async () => {
    // survey: four auto steps, one turn each. The worker kills itself once the third step ran, before that turn
    // is checkpointed; the first two turns were.
    const spawned = await spawnWorker(h, { ...RUNBOOKS, COUNTERSIGN_TEST_FAULTS: 'third-turn-then-kill' });
    child = spawned.process;
    const exited = new Promise((resolve) => spawned.process.once('exit', resolve));
    const runId = await startRunbook(spawned.url, 'survey');
    await exited;
    expect(await executions(runId, 'rb.payments@1')).toBe(1);
    expect(await executions(runId, 'rb.all@1')).toBe(0);

    // The start job's lock lapses; the new worker's stalled check hands it over (claim-run take-over).
    const rescuer = await h.startWorker(RUNBOOKS);
    const done = await h.waitForStatus(rescuer.url, runId, 'completed', 'the survey to complete', 'alice');
    expect(await executions(runId, 'rb.web@1')).toBe(1);
    expect(await executions(runId, 'rb.api@1')).toBe(1);
    // The turn in progress when the worker died runs again: an auto call is re-run, not asked about (reads only).
    expect(await executions(runId, 'rb.payments@1')).toBe(2);
    expect(await executions(runId, 'rb.all@1')).toBe(1);
    expect(done.runbook?.nodes.map((n) => `${n.path}:${n.status}`)).toEqual([
      'web:done',
      'api:done',
      'payments:done',
      'all:done',
    ]);
    await rescuer.close();
  });

  it('resumes a runbook killed between auto steps after an approval; the decision job takes it over from the checkpoint', async () => {
    // restart-survey: restart (confirm, the park), then three auto steps. The decision job resumes the run, runs
    // the restart and the status step (checkpointed: the frontier it resumed from is dropped), and the worker kills
    // itself once the third turn (api) ran. The redelivered decision job takes the run over without that frontier.
    const spawned = await spawnWorker(h, { ...RUNBOOKS, COUNTERSIGN_TEST_FAULTS: 'third-turn-then-kill' });
    child = spawned.process;
    const before = await h.restarts(spawned.url, 'web');
    const runId = await startRunbook(spawned.url, 'restart-survey');
    const [call] = await h.waitForPending(spawned.url, runId);
    expect(call.callId).toBe('rb.restart@1');
    const exited = new Promise((resolve) => spawned.process.once('exit', resolve));
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await exited;
    expect(await executions(runId, 'rb.api@1')).toBe(1);

    const rescuer = await h.startWorker(RUNBOOKS);
    await h.waitForStatus(rescuer.url, runId, 'completed', 'the runbook to complete', 'alice');
    expect(await h.restarts(rescuer.url, 'web')).toBe(before + 1);
    expect(await executions(runId, 'rb.restart@1')).toBe(1);
    expect(await executions(runId, 'rb.status@1')).toBe(1);
    expect(await executions(runId, 'rb.api@1')).toBe(2); // the turn in progress, re-run (auto: not asked about)
    expect(await executions(runId, 'rb.all@1')).toBe(1);
    await rescuer.close();
  });

  it('asks again about a sub-runbook step whose worker was killed while it executed, and runs the rest once', async () => {
    const spawned = await spawnWorker(h, {
      ...RUNBOOKS,
      AGENTS_CONFIG: slowRestarts(30_000),
    });
    child = spawned.process;
    const before = await h.restarts(spawned.url, 'api');
    const runId = await startRunbook(spawned.url, 'rollout', { service: 'api' });
    const [call] = await h.waitForPending(spawned.url, runId);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await waitFor(
      async () =>
        (await h.infra(spawned.url)).services.find((s) => s.name === 'api')?.status === 'restarting',
      'the restart to start',
    );
    await kill(spawned.process);

    const rescuer = await h.startWorker(RUNBOOKS);
    const again = await waitFor(
      () => h.approvalRequest(call.callId, 1),
      'a new approval request for the interrupted step',
      20_000,
    );
    expect(again).toMatchObject({ reason: 'interrupted', attempt: 1, fingerprint: call.fingerprint });
    expect(again?.context?.step).toBe('step 2 of 4 of rollout › step 1 of 2 of restart-one');
    expect(await h.restarts(rescuer.url, 'api')).toBe(before + 1); // the killed attempt, nothing more

    await h.publishDecision(h.decision(runId, call, 'approve', { attempt: 1, requestId: again!.requestId }));
    await h.waitForStatus(rescuer.url, runId, 'completed');
    expect(await h.restarts(rescuer.url, 'api')).toBe(before + 2);
    expect(await executions(runId, 'rb.check@1')).toBe(1);
    expect(await executions(runId, 'rb.restart.verify@1')).toBe(1);
    expect(await executions(runId, 'rb.done@1')).toBe(1);
    await rescuer.close();
  });
});

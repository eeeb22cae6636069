// Faults the tests inject at points of a run's life, through the worker's run hooks (RunHooks; a deployment has
// none): between the moment a decision job parks a run again and the moment it publishes that park's requests, where
// a dead or failing job used to leave the run parked with nobody asked; and between a turn whose calls all ran and its
// checkpoint, the most a crash between two parks can lose. Tests name them in COUNTERSIGN_TEST_FAULTS, which only the
// test harnesses read (the worker's config does not know it).
import type { RunHooks } from '../../apps/agent-worker/src/runs/run-hooks';

export const TEST_FAULTS = [
  /** The process kills itself (SIGKILL, as kill -9 would) right after a decision job parked a run. */
  'decision-park-then-kill',
  /** The first request publish after a decision job parked a run fails, once per process. */
  'decision-park-then-fail-publish',
  /**
   * The process kills itself (SIGKILL) once the calls of a run's third turn all finished, before that turn is
   * checkpointed: turns one and two are behind it, the third is the turn in progress.
   */
  'third-turn-then-kill',
] as const;
export type TestFault = (typeof TEST_FAULTS)[number];

/** The variable the harnesses read the faults of a worker from (comma-separated names). */
export const TEST_FAULTS_VARIABLE = 'COUNTERSIGN_TEST_FAULTS';

export class InjectedFaultError extends Error {
  constructor(fault: TestFault) {
    super(`injected fault ${fault} (${TEST_FAULTS_VARIABLE})`);
    this.name = this.constructor.name;
  }
}

export class TestFaults implements RunHooks {
  private publishFailed = false;

  constructor(private readonly enabled: readonly TestFault[] = []) {}

  afterPark({ byDecision }: { byDecision: boolean }): void {
    if (byDecision && this.enabled.includes('decision-park-then-kill')) process.kill(process.pid, 'SIGKILL');
  }

  afterTurn({ turn }: { turn: number }): void {
    if (turn === 3 && this.enabled.includes('third-turn-then-kill')) process.kill(process.pid, 'SIGKILL');
  }

  beforePublish({ byDecision }: { byDecision: boolean }): void {
    if (!byDecision || this.publishFailed || !this.enabled.includes('decision-park-then-fail-publish'))
      return;
    this.publishFailed = true;
    throw new InjectedFaultError('decision-park-then-fail-publish');
  }
}

/** The faults an environment names (none unless asked); an unknown name is refused, naming the variable. */
export function testFaultsFrom(env: Record<string, string | undefined>): TestFault[] {
  const names = (env[TEST_FAULTS_VARIABLE] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(TEST_FAULTS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(
      `${TEST_FAULTS_VARIABLE}: unknown fault(s) ${unknown.join(', ')} (known: ${TEST_FAULTS.join(', ')})`,
    );
  return names as TestFault[];
}

/** The run hooks of the faults an environment names, or none (a worker exactly as deployed). */
export function runHooksFrom(env: Record<string, string | undefined>): RunHooks | undefined {
  const faults = testFaultsFrom(env);
  return faults.length > 0 ? new TestFaults(faults) : undefined;
}

// Faults the reliability tests inject at places of the run loop (COUNTERSIGN_TEST_FAULTS; test only, never set in a
// deployment): between the moment a decision job parks a run again and the moment it publishes that park's requests,
// where a dead or failing job used to leave the run parked with nobody asked; and between a turn whose calls all ran
// and its checkpoint, the most a crash between two parks can lose.

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

export class InjectedFaultError extends Error {
  constructor(fault: TestFault) {
    super(`injected fault ${fault} (COUNTERSIGN_TEST_FAULTS)`);
    this.name = this.constructor.name;
  }
}

export class TestFaults {
  private publishFailed = false;

  constructor(private readonly enabled: readonly TestFault[] = []) {}

  /** A run was just parked; `byDecision`: by a decision job (not its start job). */
  afterPark(byDecision: boolean): void {
    if (byDecision && this.enabled.includes('decision-park-then-kill')) process.kill(process.pid, 'SIGKILL');
  }

  /** The calls of a run's `turn`-th turn (1-based) all finished, and nothing of the turn is stored yet. */
  afterTurn(turn: number): void {
    if (turn === 3 && this.enabled.includes('third-turn-then-kill')) process.kill(process.pid, 'SIGKILL');
  }

  /** The requests of a park are about to be published. */
  beforePublish(byDecision: boolean): void {
    if (!byDecision || this.publishFailed || !this.enabled.includes('decision-park-then-fail-publish'))
      return;
    this.publishFailed = true;
    throw new InjectedFaultError('decision-park-then-fail-publish');
  }
}

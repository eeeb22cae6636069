// Points of a run's life where whoever starts the worker may look in (startAgentWorker's `runHooks`); a deployment
// gives none. A hook runs inline: one that throws fails what comes next as any error there would (the job retries).

export interface RunHooks {
  /** A run was just parked; `byDecision`: by a decision job (not its start job). */
  afterPark?(at: { runId: string; byDecision: boolean }): void;
  /** The calls of a run's `turn`-th turn (1-based) all finished, and nothing of the turn is stored yet. */
  afterTurn?(at: { runId: string; turn: number }): void;
  /** The requests of a park are about to be published. */
  beforePublish?(at: { runId: string; byDecision: boolean }): void;
}

/** Injection token of the hooks (NO_RUN_HOOKS unless bootstrap was given some). */
export const RUN_HOOKS = Symbol('RunHooks');

export const NO_RUN_HOOKS: RunHooks = Object.freeze({});

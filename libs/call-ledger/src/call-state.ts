// The states of one governed call and the moves between them: the TypeScript side of lua/includes/call-ledger.lua. Every
// place that keeps a call (the agent worker's runs, the approvals API, the MCP gateway) checks states here, as
// trigger.dev keeps every run-status check in one file.

/** Where a governed call is in its life. */
export const CallState = {
  /** Waiting for a decision. */
  Pending: 'pending',
  /** A person or a policy approved it; nobody has claimed it yet. */
  Approved: 'approved',
  /** Refused by a decision; it never runs. */
  Denied: 'denied',
  /** Claimed by one executor, under its token, alive while its heartbeat is fresh. */
  Executing: 'executing',
  /** Finished: it ran (or a decision ended it without running); the result is stored. */
  Done: 'done',
  /** Ended without running, for a reason that is not a decision (the tool is gone, the approval no longer holds). */
  Refused: 'refused',
  /** Its executor died while it ran: it may have changed the world, so it is asked about again, never re-run. */
  Interrupted: 'interrupted',
} as const;
export type CallState = (typeof CallState)[keyof typeof CallState];

/** Every allowed move. `executing` is entered only by a claim and left only by complete or interrupt. */
export const CALL_TRANSITIONS: Readonly<Record<CallState, readonly CallState[]>> = {
  pending: ['approved', 'denied', 'refused'],
  approved: ['executing', 'done', 'refused', 'pending'],
  denied: ['done', 'refused'],
  executing: ['done', 'refused', 'interrupted'],
  done: [],
  refused: [],
  interrupted: ['pending'],
};

export function canMove(from: CallState, to: CallState): boolean {
  return CALL_TRANSITIONS[from].includes(to);
}

/** The call will never run (again): its outcome is stored. */
export function isSettled(state: CallState): boolean {
  return state === CallState.Done || state === CallState.Refused;
}

/** A decision is recorded and nothing has acted on it yet. */
export function isDecided(state: CallState): boolean {
  return state === CallState.Approved || state === CallState.Denied;
}

/** Only an approved call may be claimed for execution, and only once. */
export function isClaimable(state: CallState): boolean {
  return state === CallState.Approved;
}

export function isCallState(value: unknown): value is CallState {
  return typeof value === 'string' && value in CALL_TRANSITIONS;
}

/** The hash fields of a call under `prefix` (see lua/includes/call-ledger.lua); storage names live only here and there. */
export function ledgerFields(prefix: string) {
  return {
    state: `${prefix}s`,
    token: `${prefix}x`,
    heartbeat: `${prefix}h`,
    result: `${prefix}r`,
  } as const;
}

/** The name scripts include the ledger by: `--- @include "@countersign/call-ledger/call-ledger"`. */
export const CALL_LEDGER_INCLUDE = '@countersign/call-ledger/call-ledger';

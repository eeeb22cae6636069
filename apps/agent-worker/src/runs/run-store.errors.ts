// Negative return codes of the run scripts (see lua/*.lua), turned into typed errors in one place.

export enum ErrorCode {
  RunNotFound = -1,
  CallNotInFrontier = -2,
  StaleAttempt = -3,
  FingerprintMismatch = -4,
  NotOwner = -5,
  WrongCallState = -6,
  ExecutionLost = -7,
  /** apply-decision: the call waits for another request than the decision answers. */
  RequestMismatch = -8,
}

export class RunNotFoundError extends Error {
  constructor(readonly runId: string) {
    super(`run "${runId}" does not exist`);
    this.name = this.constructor.name;
  }
}

/** Another processing took the run over (this one was presumed dead): stop touching it. */
export class OwnershipLostError extends Error {
  constructor(readonly runId: string) {
    super(`this worker no longer owns run "${runId}"`);
    this.name = this.constructor.name;
  }
}

export class WrongCallStateError extends Error {
  constructor(
    readonly runId: string,
    readonly callId: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`call "${callId}" of run "${runId}" is "${actual || 'missing'}", expected "${expected}"`);
    this.name = this.constructor.name;
  }
}

/**
 * The call this worker executed was declared interrupted (its heartbeat went stale) and asked about
 * again before the result could be recorded: the result is dropped, the re-ask stands.
 */
export class ExecutionLostError extends Error {
  constructor(
    readonly runId: string,
    readonly callId: string,
    readonly state: string,
  ) {
    super(
      `call "${callId}" of run "${runId}" is "${state || 'missing'}", no longer executing under this worker`,
    );
    this.name = this.constructor.name;
  }
}

export class UnexpectedScriptReplyError extends Error {
  constructor(script: string, reply: unknown) {
    super(`script ${script} answered ${JSON.stringify(reply)}`);
    this.name = this.constructor.name;
  }
}

/** Throws the typed error for a negative script reply; returns for anything else. */
export function throwOnErrorCode(
  code: number,
  ctx: { runId: string; callId?: string; expected?: string; actual?: string },
): void {
  switch (code) {
    case ErrorCode.RunNotFound:
      throw new RunNotFoundError(ctx.runId);
    case ErrorCode.NotOwner:
      throw new OwnershipLostError(ctx.runId);
    case ErrorCode.ExecutionLost:
      throw new ExecutionLostError(ctx.runId, ctx.callId ?? '?', ctx.actual ?? '');
    case ErrorCode.WrongCallState:
      throw new WrongCallStateError(ctx.runId, ctx.callId ?? '?', ctx.expected ?? '?', ctx.actual ?? '');
    default:
      if (code < 0) throw new UnexpectedScriptReplyError('run script', code);
  }
}

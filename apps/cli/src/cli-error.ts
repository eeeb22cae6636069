// Errors the CLI reports in one line with a meaningful exit code, instead of a stack trace.

/** Exit codes of every `countersign` command (also listed in `countersign --help`). */
export const ExitCode = {
  Ok: 0,
  /** Unexpected failure, or the run ended `failed`. */
  Failure: 1,
  /** Bad arguments or input (invalid JSON, unknown option value, unreadable script file). */
  InvalidInput: 2,
  /** A service did not answer (not running, wrong URL). */
  Unreachable: 3,
  /** Unknown call ID, run ID or agent. */
  NotFound: 4,
  /** Missing or rejected approver token, or an approver who may not decide this call. */
  NotAuthorized: 5,
  /** The call was already decided, expired, or is a manual-step notice. */
  Conflict: 6,
  /** The arguments changed since the revision you decided on (another approver edited them): nothing was decided. */
  Changed: 7,
  /** A call ID that requests of several runs used (call IDs may repeat across runs): name the request by its request ID. */
  Ambiguous: 8,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = this.constructor.name;
  }
}

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  unexpected failure, or the run failed
  2  invalid arguments or input
  3  a service is unreachable
  4  unknown call ID, run or agent
  5  not authorized (missing/rejected approver token, not an approver of this call)
  6  already decided, expired, or nothing to decide
  7  the arguments changed since the revision you decided on (someone edited them): nothing decided
  8  the call ID names requests of several runs: use the request ID it lists`;

// Delays between reconnection (or restart) attempts: doubling from the first delay up to a ceiling.

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
}

/** The delay before attempt `failures` + 1, after `failures` failures in a row (0 → the initial delay). */
export function backoffDelay(failures: number, options: BackoffOptions): number {
  const delay = options.initialDelayMs * 2 ** Math.min(Math.max(failures, 0), 30);
  return Math.min(delay, options.maxDelayMs);
}

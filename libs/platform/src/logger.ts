import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * One structured line per event. Lines about a call carry `runId` and `callId`. `destination` defaults to stdout; a
 * process whose stdout carries a protocol (an MCP server over stdio) logs to stderr instead (`pino.destination(2)`);
 * a path (LOG_FILE) appends to that file, creating its folder.
 */
export function createLogger(
  service: string,
  level = 'info',
  destination?: DestinationStream | string,
): Logger {
  const options = { name: service, level, base: { service } };
  if (typeof destination === 'string')
    return pino(options, pino.destination({ dest: destination, mkdir: true, append: true, sync: true }));
  return destination ? pino(options, destination) : pino(options);
}

/**
 * For errors that repeat as fast as a client reconnects (Redis down): the first occurrence of each distinct
 * `(context, message)` is logged at once, repeats at most once per `everyMs` with how many were skipped, so an
 * outage is visible without a line per reconnect attempt.
 */
export function throttledErrorLog(
  logger: Logger,
  msg: string,
  everyMs = 30_000,
): (context: Record<string, unknown>, error: Error) => void {
  const seen = new Map<string, { loggedAt: number; skipped: number }>();
  return (context, error) => {
    const key = `${JSON.stringify(context)} ${error.message}`;
    const now = Date.now();
    const last = seen.get(key);
    if (last && now - last.loggedAt < everyMs) {
      last.skipped++;
      return;
    }
    if (seen.size > 100) seen.clear(); // distinct errors are few; never let the map grow with odd messages
    seen.set(key, { loggedAt: now, skipped: 0 });
    logger.error({ ...context, err: error.message, repeatedSinceLastLine: last?.skipped }, msg);
  };
}

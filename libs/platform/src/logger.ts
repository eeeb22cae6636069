import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** One structured line per event. Lines about a call carry `runId` and `callId`. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({ name: service, level, base: { service } });
}

// Redis keys of runs, private to the agent worker. Every key of one run shares one hash tag, so each Lua script
// that moves a run touches a single Redis Cluster slot.

/**
 * The one key of one run: a hash of its header fields (status, owner, messages, ...) and of the call fields
 * of its pending frontier (callFields). One key per run keeps a parked run small (100,000s may be at rest).
 * The whole key is a hash tag, so it is one Redis Cluster slot whatever a Lua script touches.
 */
export function runKey(keyPrefix: string, runId: string): string {
  return `{${keyPrefix}:run:${runId}}`;
}

/** Fields of one call inside the run hash; `c:` keeps them apart from the header fields. */
export const callFields = {
  /** The call as parked (name, args, tier, fingerprint, definition hash, attempt): JSON, rewritten only on a re-ask. */
  body: (callId: string) => `c:${callId}`,
  /** pending | approved | denied | executing | done */
  state: (callId: string) => `c:${callId}:s`,
  /** The verified decision (JSON). */
  decision: (callId: string) => `c:${callId}:d`,
  /** What the model is told about the call once settled (JSON). */
  result: (callId: string) => `c:${callId}:r`,
  /** The call ID when `field` is a call's body field, else undefined (header field or another call field). */
  idOfBody: (field: string): string | undefined =>
    field.startsWith('c:') && !field.includes(':', 2) ? field.slice(2) : undefined,
};

/**
 * Fields of the run's event history inside the run hash: it expires with the run and costs a parked run no key of
 * its own. Events are numbered from 1 (the SSE `id:`); the oldest are dropped past a bound.
 */
export const runEventFields = {
  /** The number of the newest event (absent: the run has no history, e.g. it was stored by an older version). */
  last: 'e',
  /** One event, encoded as StoredRunEventSchema (JSON). */
  entry: (seq: number) => `e:${seq}`,
  /** The event number when `field` is a history entry, else undefined. */
  seqOf: (field: string): number | undefined =>
    field.startsWith('e:') && /^\d+$/.test(field.slice(2)) ? Number(field.slice(2)) : undefined,
};

/** Pub/sub channel carrying every run event of one deployment (one subscriber per process). */
export function runEventsChannel(keyPrefix: string): string {
  return `${keyPrefix}:run-events`;
}

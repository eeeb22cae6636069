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

/**
 * Fields of one call inside the run hash; `c:` keeps them apart from the header fields. The call's state, execution
 * token, heartbeat and result are the call ledger's fields under `prefix` (ledgerFields in libs/call-ledger: `<prefix>s`,
 * `x`, `h`, `r`), moved only by the ledger's Lua functions.
 */
export const callFields = {
  /** Where the call's ledger fields start. */
  prefix: (callId: string) => `c:${callId}:`,
  /** The call as parked (name, args, tier, fingerprint, definition hash, attempt): JSON, rewritten only on a re-ask. */
  body: (callId: string) => `c:${callId}`,
  /** The verified decision (JSON). */
  decision: (callId: string) => `c:${callId}:d`,
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
  /** Present once an event sent only once (a fresh turn's call result, see appendEventOnce) is in the history. */
  sentOnce: (marker: string) => `t:${marker}`,
};

/** The run hash's field keeping a person's denial of the call with this fingerprint (sticky denials, scope `run`). */
export const stickyDenialField = (fingerprint: string) => `deny:${fingerprint}`;

/**
 * A person's denial of the call with this fingerprint for this requester, kept for the tool's window (sticky denials,
 * scope `requester`). One hash tag per requester: all of a turn's lookups are one MGET in one slot.
 */
export function requesterDenialKey(keyPrefix: string, requester: string, fingerprint: string): string {
  return `{${keyPrefix}:denied:${requester}}:${fingerprint}`;
}

/** Pub/sub channel carrying every run event of one deployment (one subscriber per process). */
export function runEventsChannel(keyPrefix: string): string {
  return `${keyPrefix}:run-events`;
}

/**
 * Parked calls whose approval request is not confirmed on the queue yet (a sorted set scored by when the call was
 * noted, ms): an entry is added before the run parks and removed once its request is published, so in normal
 * operation it lives for milliseconds and costs a parked run nothing at rest. What stays past a sweep interval is a
 * request the parking job never published; every replica's RequestSweep publishes those. Its own hash tag: one key
 * for every run, so one slot in a Redis Cluster.
 */
export function unpublishedRequestsKey(keyPrefix: string): string {
  return `{${keyPrefix}:runs}:unpublished`;
}

/** One entry of unpublishedRequestsKey: which run, call and request (IDs never contain '|'). */
export interface UnpublishedRequest {
  runId: string;
  callId: string;
  requestId: string;
}

export const unpublishedMember = ({ runId, callId, requestId }: UnpublishedRequest) =>
  `${runId}|${callId}|${requestId}`;

/** The entry a member stands for; undefined for one no version of the worker writes. */
export function parseUnpublishedMember(member: string): UnpublishedRequest | undefined {
  const [runId, callId, requestId, ...rest] = member.split('|');
  return runId && callId && requestId && rest.length === 0 ? { runId, callId, requestId } : undefined;
}

// Redis keys the agent worker owns. Every key of one run shares one hash tag, so each Lua script
// that moves a run touches a single Redis Cluster slot.

/** The two keys of one run: its header hash and its pending frontier (one hash of call fields). */
export function runKeys(keyPrefix: string, runId: string): { meta: string; calls: string } {
  const tag = `{${keyPrefix}:run:${runId}}`;
  return { meta: `${tag}:meta`, calls: `${tag}:calls` };
}

/** Fields of one call inside the run's `calls` hash. */
export const callFields = {
  /** The call as parked (name, args, tier, fingerprint, definition hash, attempt): JSON, rewritten only on a re-ask. */
  body: (callId: string) => callId,
  /** pending | approved | denied | executing | done */
  state: (callId: string) => `${callId}:s`,
  /** The verified decision (JSON). */
  decision: (callId: string) => `${callId}:d`,
  /** What the model is told about the call once settled (JSON). */
  result: (callId: string) => `${callId}:r`,
};

/** The simulated infrastructure of the built-in `ops` agent. */
export function infraKeys(keyPrefix: string): { services: string; volumes: string; seeded: string } {
  const tag = `{${keyPrefix}:infra}`;
  return { services: `${tag}:services`, volumes: `${tag}:volumes`, seeded: `${tag}:seeded` };
}

/** Pub/sub channel carrying every run event of one deployment (one subscriber per process). */
export function runEventsChannel(keyPrefix: string): string {
  return `${keyPrefix}:run-events`;
}

// Who, besides its requester, may read a run: the approvers its calls were routed to. The approval service adds them
// when it routes (or escalates) a request; the agent worker checks the set before showing the run to anyone else.
/** A set of principal IDs under the run's own hash tag (Redis Cluster: beside the run, spread like runs are). */
export function runReadersKey(keyPrefix: string, runId: string): string {
  return `{${keyPrefix}:run:${runId}}:readers`;
}

// Redis keys of the simulated infrastructure the built-in `ops` agent acts on, private to the agent worker.
// One hash tag for all of them (Redis Cluster).

export function infraKeys(keyPrefix: string): { services: string; volumes: string; seeded: string } {
  const tag = `{${keyPrefix}:infra}`;
  return { services: `${tag}:services`, volumes: `${tag}:volumes`, seeded: `${tag}:seeded` };
}

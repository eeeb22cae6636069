// Redis keys of the simulated infrastructure the `ops` tools act on (the agent worker's built-in ones, the ops MCP server).
// One hash tag for all of them (Redis Cluster).

export function infraKeys(keyPrefix: string): { services: string; volumes: string; seeded: string } {
  const tag = `{${keyPrefix}:infra}`;
  return { services: `${tag}:services`, volumes: `${tag}:volumes`, seeded: `${tag}:seeded` };
}

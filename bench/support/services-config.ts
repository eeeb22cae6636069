// The principals, tokens, routing and limits of the services every bench script starts: one place, so the bench and
// bench:monitor run the same services the same way.
import { tokenSha256 } from '@countersign/contracts';

export const APPROVER_TOKEN = 'bench-approver-token-0123456789';
/** alice starts the runs (an operator of the `ops` agent); bench-approver decides them. */
export const REQUESTER_TOKEN = 'bench-requester-token-0123456789';
/** The workers' machine client, the one caller the ops MCP server lets in. */
export const OPS_MCP_TOKEN = 'bench-agent-worker-token-0123456789';
/** The MCP gateway's own principal (an approvals client acting for alice). */
export const GATEWAY_TOKEN = 'bench-mcp-gateway-token-0123456789';
export const PRINCIPALS_CONFIG = JSON.stringify({
  principals: [
    { id: 'alice', name: 'Bench requester', tokens: [{ sha256: tokenSha256(REQUESTER_TOKEN) }] },
    { id: 'bench-approver', name: 'Bench approver', tokens: [{ sha256: tokenSha256(APPROVER_TOKEN) }] },
    {
      id: 'agent-worker',
      name: 'Bench agent workers',
      kind: 'machine',
      tokens: [{ sha256: tokenSha256(OPS_MCP_TOKEN) }],
    },
    {
      id: 'mcp-gateway',
      name: 'Bench MCP gateway',
      kind: 'machine',
      roles: ['approvals-client'],
      actAs: ['alice'],
      tokens: [{ sha256: tokenSha256(GATEWAY_TOKEN) }],
    },
  ],
});
/** The gateway fronts the ops MCP server with its tools under their own names, alice may call them all. */
export const GATEWAY_CONFIG = JSON.stringify({
  mcpServers: {
    ops: {
      transport: 'http',
      url: { $env: 'OPS_MCP_URL' },
      headers: { Authorization: { $secret: 'OPS_MCP_TOKEN', prefix: 'Bearer ' } },
      prefix: '',
      tiers: { 'get_*': 'auto', 'list_*': 'auto', '*': 'confirm' },
    },
  },
  roles: { operator: { allow: ['tool:*'] } },
  users: { alice: ['operator'] },
});
/**
 * The bench starts and decides thousands of runs a minute as one principal from one address, far past the defaults
 * for real use. The limits stay on (each run start and decision is counted, as in production), set far higher.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_RUN_STARTS: '1000000/1m',
  RATE_LIMIT_RUN_STARTS_ADDRESS: '1000000/1m',
  RATE_LIMIT_DECISIONS: '1000000/1m',
  RATE_LIMIT_DECISIONS_ADDRESS: '1000000/1m',
  // The gateway-overhead phase's calls through the MCP gateway, one principal.
  RATE_LIMIT_SESSION_OPENS: '1000000/1m',
  RATE_LIMIT_TOOL_CALLS: '1000000/1m',
};
export const APPROVALS_CONFIG = JSON.stringify({
  groups: [{ id: 'bench', members: ['bench-approver'] }],
  defaultGroup: 'bench',
  defaults: { channels: ['web'], expiresIn: '30m' },
});

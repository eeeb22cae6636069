// The principals of the tests: one directory (PRINCIPALS_CONFIG) both services read, so "bob" is one identity in the
// agent worker and the approval service. Tokens are readable here; the services get only their SHA-256.
import { tokenSha256 } from '@countersign/contracts';
import type { Principal } from '@countersign/platform';

/** The bearer token of a default test principal. */
export const testToken = (id: string) => `${id}-test-token-0123456789`;

type Entry = Partial<Principal> & { id: string; name: string; token?: string };

/**
 * alice and bob are operators of the `ops` agent (test/support/agents.json), mallory a viewer; bob, carol and dave are the
 * usual approvers. `ops-bot` is a machine client that may start runs for alice; `auditor` reads every run and the
 * whole audit; `scraper` reads /metrics; `agent-bot` (which may act for alice), `team-bot` (alice and bob) and `other-bot`
 * submit calls to the approvals API, and so does `mcp-gateway` (the MCP gateway's own principal, which may act for anyone).
 */
export const TEST_PRINCIPALS: Entry[] = [
  // Cedar policies see alice and mallory in payments (system-cedar); the JSON rules ignore it.
  { id: 'alice', name: 'Alice', email: 'alice@example.test', policyGroups: ['payments'] },
  { id: 'bob', name: 'Bob', email: 'bob@example.test' },
  { id: 'carol', name: 'Carol', email: 'carol@example.test' },
  { id: 'dave', name: 'Dave', email: 'dave@example.test' },
  { id: 'mallory', name: 'Mallory', email: 'mallory@example.test', policyGroups: ['payments'] },
  { id: 'ops-bot', name: 'Ops bot', kind: 'machine', actAs: ['alice'] },
  { id: 'auditor', name: 'Auditor', roles: ['runs-reader', 'audit-reader'] },
  { id: 'scraper', name: 'Scraper', kind: 'machine', roles: ['metrics-reader'] },
  // Agents Countersign does not run, submitting their calls to the approvals API (/external-approvals).
  { id: 'agent-bot', name: 'Agent bot', kind: 'machine', roles: ['approvals-client'], actAs: ['alice'] },
  { id: 'other-bot', name: 'Other bot', kind: 'machine', roles: ['approvals-client'] },
  // A client acting for two people: what one submits for alice is never bob's (issue 24, finding 2).
  { id: 'team-bot', name: 'Team bot', kind: 'machine', roles: ['approvals-client'], actAs: ['alice', 'bob'] },
  // The MCP gateway: it submits the confirm-tier calls of whoever calls through it, in their name.
  { id: 'mcp-gateway', name: 'MCP gateway', kind: 'machine', roles: ['approvals-client'], actAs: ['*'] },
];

/** An approver as the tests' approvals configs list it: a principal with its readable token. */
export interface TestApprover {
  id: string;
  name: string;
  email?: string;
  slackUserId?: string;
  apiToken: string;
  /** Service roles, e.g. `rule-writer`. */
  roles?: Principal['roles'];
}

/** PRINCIPALS_CONFIG (inline JSON): the default test principals, with `approvers` replacing those of the same ID. */
export function principalsConfig(approvers: readonly TestApprover[] = []): string {
  const byId = new Map<string, Entry>(TEST_PRINCIPALS.map((p) => [p.id, p]));
  for (const { apiToken, ...approver } of approvers) byId.set(approver.id, { ...approver, token: apiToken });
  const principals = [...byId.values()].map(({ token, ...principal }) => ({
    ...principal,
    tokens: [{ sha256: tokenSha256(token ?? testToken(principal.id)) }],
  }));
  return JSON.stringify({ principals });
}

/**
 * The tests write approvals configs the way they always have, approvers (with tokens) beside the groups; the services
 * read two files. This splits one into APPROVALS_CONFIG (groups, rules) and PRINCIPALS_CONFIG (everyone, hashed).
 */
export function directoryEnv(approvals: { approvers?: readonly TestApprover[] } & object): {
  APPROVALS_CONFIG: string;
  PRINCIPALS_CONFIG: string;
} {
  const { approvers = [], ...rest } = approvals;
  return { APPROVALS_CONFIG: JSON.stringify(rest), PRINCIPALS_CONFIG: principalsConfig(approvers) };
}

/** `Authorization` header of a default test principal, or of a token. */
export function bearer(idOrToken: string): { Authorization: string } {
  const token = TEST_PRINCIPALS.some((p) => p.id === idOrToken) ? testToken(idOrToken) : idOrToken;
  return { Authorization: `Bearer ${token}` };
}

// OIDC bearer tokens on all three services that take them (agent worker, approval service, MCP gateway), against a
// local issuer (a JWKS server): a token must expire, within PRINCIPALS_CONFIG's oidc.maxTokenLifetime, and its subject
// may name a machine principal only when that principal's config says OIDC may reach it (an explicit oidcSubject).
import http from 'node:http';
import { exportJWK, generateKeyPair, type KeyLike, SignJWT } from 'jose';
import { startApprovalService, type RunningApprovalService } from '../apps/approval-service/src/bootstrap';
import { startAgentWorker, type RunningAgentWorker } from '../apps/agent-worker/src/bootstrap';
import { startMcpGateway, type RunningMcpGateway } from '../apps/mcp-gateway/src/bootstrap';
import { workerEnv } from './support/agent-worker-harness';
import { approvalServiceEnv } from './support/approval-harness';
import { TEST_AUDIT_SECRET } from './support/audit';
import { group } from './support/fixtures';
import { testToken, TEST_PRINCIPALS } from './support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';
import { TestMcpServer } from './support/test-mcp-server';
import { tokenSha256 } from '@countersign/contracts';

jest.setTimeout(30_000);

const ISSUER = 'https://sso.corp.example';
const AUDIENCE = 'countersign';
const HOUR = 3600;

let key: KeyLike;
let issuer: http.Server;
let jwksUrl: string;

/**
 * The test principals, each with its test token, plus `deploy-bot`: a machine principal OIDC may reach (its config
 * names the subject its tokens carry).
 */
function principalsConfig(oidc: Record<string, unknown> = {}): string {
  const principals = [
    ...TEST_PRINCIPALS.map(({ id, name, kind, roles, actAs }) => ({
      id,
      name,
      ...(kind ? { kind } : {}),
      ...(roles ? { roles } : {}),
      ...(actAs ? { actAs } : {}),
      tokens: [{ sha256: tokenSha256(testToken(id)) }],
    })),
    { id: 'deploy-bot', name: 'Deploy bot', kind: 'machine', oidcSubject: 'repo:corp/deploy' },
  ];
  return JSON.stringify({ principals, oidc: { issuer: ISSUER, audience: AUDIENCE, jwksUrl, ...oidc } });
}

/** A token of the issuer: `sub`, and `iat` / `exp` in seconds from now (absent when undefined). */
function jwt(sub: string, times: { iat?: number; exp?: number }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT({ sub })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE);
  if (times.iat !== undefined) token.setIssuedAt(now + times.iat);
  if (times.exp !== undefined) token.setExpirationTime(now + times.exp);
  return token.sign(key);
}

/** Each service with one route any principal may use: the status it answers and the body, for one bearer token. */
type Probe = (token: string) => Promise<{ status: number; body: string }>;

/** The approval service's groups and rules: bob approves everything (nothing is asked here). */
const ROUTING = { groups: [group('ops', ['bob'])], defaultGroup: 'ops' };

const prefixes = uniquePrefixes('oidc');
const approvalPrefixes = uniquePrefixes('oidc-approvals');
let worker: RunningAgentWorker;
let approvals: RunningApprovalService;
let gateway: RunningMcpGateway;
const downstream = new TestMcpServer();

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  key = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  issuer = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(issuer.address() as { port: number }).port}/jwks`;
  await downstream.start();

  const local = { port: 0, host: '127.0.0.1' };
  worker = await startAgentWorker(workerEnv(prefixes, { PRINCIPALS_CONFIG: principalsConfig() }), local);
  approvals = await startApprovalService(
    approvalServiceEnv(approvalPrefixes, ROUTING, { PRINCIPALS_CONFIG: principalsConfig() }),
    local,
  );
  gateway = await startMcpGateway(
    {
      REDIS_URL: TEST_REDIS_URL,
      KEY_PREFIX: prefixes.keyPrefix,
      LOG_LEVEL: 'silent',
      PRINCIPALS_CONFIG: principalsConfig(),
      AUDIT_SIGNING_SECRET: TEST_AUDIT_SECRET,
      GATEWAY_CONFIG: JSON.stringify({
        mcpServers: { notes: { transport: 'http', url: downstream.url, tiers: { '*': 'auto' } } },
        roles: { reader: { allow: ['tool:*'] } },
        users: { alice: ['reader'], 'deploy-bot': ['reader'] },
      }),
      APPROVAL_SERVICE_URL: approvals.url,
      GATEWAY_TOKEN: testToken('mcp-gateway'),
    },
    local,
  );
});

afterAll(async () => {
  await gateway?.close();
  await worker?.close();
  await approvals?.close();
  await downstream.stop();
  await new Promise((resolve) => issuer?.close(resolve));
  await deletePrefixedKeys(prefixes);
  await deletePrefixedKeys(approvalPrefixes);
});

/** The status, and the body's `message` (HTTP routes) or JSON-RPC `error.message` (MCP), else its text. */
async function answer(res: Response): Promise<{ status: number; body: string }> {
  const text = await res.text();
  try {
    const json = JSON.parse(text) as { message?: unknown; error?: { message?: unknown } };
    const message = json.message ?? json.error?.message;
    return { status: res.status, body: typeof message === 'string' ? message : text };
  } catch {
    return { status: res.status, body: text };
  }
}

const SERVICES: [name: string, probe: Probe][] = [
  [
    'agent worker',
    async (token) =>
      answer(await fetch(`${worker.url}/runbooks`, { headers: { Authorization: `Bearer ${token}` } })),
  ],
  [
    'approval service',
    async (token) =>
      answer(await fetch(`${approvals.url}/approvals`, { headers: { Authorization: `Bearer ${token}` } })),
  ],
  [
    'MCP gateway',
    async (token) =>
      answer(
        await fetch(gateway.url!, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              clientInfo: { name: 'oidc-test', version: '1.0.0' },
            },
          }),
        }),
      ),
  ],
];

describe.each(SERVICES)('OIDC on the %s', (_service, probe) => {
  it('accepts a person’s token that expires within the maximum lifetime', async () => {
    expect((await probe(await jwt('alice', { iat: 0, exp: 5 * 60 }))).status).toBe(200);
  });

  it.each([
    ['a token without exp (it would never expire)', () => jwt('alice', { iat: 0 }), 'has no "exp" claim'],
    [
      'a token living longer than the maximum (exp - iat 25 h, default maximum 24 h)',
      () => jwt('alice', { iat: 0, exp: 25 * HOUR }),
      'longer than oidc.maxTokenLifetime allows',
    ],
    [
      'a token without iat that stays valid longer than the maximum from now',
      () => jwt('alice', { exp: 25 * HOUR }),
      'longer than oidc.maxTokenLifetime allows',
    ],
    [
      'a token issued "later" to look short-lived (iat in the future)',
      () => jwt('alice', { iat: 24 * HOUR, exp: 25 * HOUR }),
      'longer than oidc.maxTokenLifetime allows',
    ],
    [
      'a token whose subject names a machine principal (mcp-gateway, actAs *)',
      () => jwt('mcp-gateway', { iat: 0, exp: 5 * 60 }),
      'names machine principal "mcp-gateway"',
    ],
  ])('refuses %s with 401 and the reason', async (_what, token, reason) => {
    const { status, body } = await probe(await token());
    expect(status).toBe(401);
    expect(body).toContain(reason);
  });

  it('accepts a machine principal whose config lets OIDC reach it (an explicit oidcSubject)', async () => {
    expect((await probe(await jwt('repo:corp/deploy', { iat: 0, exp: 5 * 60 }))).status).toBe(200);
  });
});

describe('oidc.maxTokenLifetime', () => {
  const shortPrefixes = uniquePrefixes('oidc-short');
  let short: RunningAgentWorker;
  beforeAll(async () => {
    short = await startAgentWorker(
      workerEnv(shortPrefixes, { PRINCIPALS_CONFIG: principalsConfig({ maxTokenLifetime: '10m' }) }),
      { port: 0, host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await short?.close();
    await deletePrefixedKeys(shortPrefixes);
  });

  it('is the configured one: a 1-hour token is refused under a 10-minute maximum, a 5-minute one accepted', async () => {
    const get = async (token: string) =>
      answer(await fetch(`${short.url}/runbooks`, { headers: { Authorization: `Bearer ${token}` } }));
    const hour = await get(await jwt('alice', { iat: 0, exp: HOUR }));
    expect(hour.status).toBe(401);
    expect(hour.body).toContain('valid for 3600 s, longer than oidc.maxTokenLifetime allows (600 s)');
    expect((await get(await jwt('alice', { iat: 0, exp: 5 * 60 }))).status).toBe(200);
  });
});

// Identity on every door: the attacks of issue "Identity on every door", tried against the whole system. Each of these
// succeeded on the build before principals existed (routes answered without a credential and took the requester from
// the body); each must now be refused, with nothing run and nothing shown to someone it is not for.
import http from 'node:http';
import type { ApprovalView, AuditEntry, RunView } from '@countersign/contracts';
import { SignJWT, exportJWK, generateKeyPair, type KeyLike } from 'jose';
import { startAgentWorker, type RunningAgentWorker } from '../apps/agent-worker/src/bootstrap';
import { workerEnv } from './support/agent-worker-harness';
import { group } from './support/fixtures';
import { signInForm, signInToInbox } from './support/inbox-session';
import { bearer, testToken, TEST_PRINCIPALS } from './support/principals';
import { deletePrefixedKeys, uniquePrefixes, waitFor } from './support/redis';
import { restartScript, TestSystem } from './support/system';
import { tokenSha256 } from '@countersign/contracts';

/** bob and carol decide restarts (ops); dave decides scaling (finance). */
const APPROVALS = {
  groups: [group('ops', ['bob', 'carol']), group('finance', ['dave'])],
  rules: [{ name: 'scaling is finance', match: { tool: 'scale_service' }, groups: ['finance'] }],
  defaultGroup: 'ops',
  defaults: { channels: ['web', 'email'], expiresIn: '30m' },
};

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start('identity', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(APPROVALS) },
  });
});
afterAll(() => system?.close());

async function worker<T = unknown>(
  method: string,
  path: string,
  as?: string,
  body?: unknown,
): Promise<{ status: number; json: T; headers: Headers }> {
  const res = await fetch(`${system.workerUrl}${path}`, {
    method,
    headers: {
      ...(as ? bearer(as) : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

describe('finding 1: nobody starts a run as someone else', () => {
  it('refuses a requester named in the body, and starts the run in the caller’s name', async () => {
    const forged = await worker<{ message: string }>('POST', '/runs', 'bob', {
      agent: 'ops',
      userId: 'alice',
      input: 'restart api',
      script: restartScript('id-forged'),
    });
    expect(forged.status).toBe(400);
    expect(forged.json.message).toContain(
      'userId: is not accepted: the requester is the authenticated caller',
    );

    const before = (await system.service('api')).restarts;
    const runId = await system.startRun(restartScript('api'), {}, 'bob');
    const call = await system.waitForPendingCall(runId, 'bob');
    expect((await system.run(runId, 'bob')).userId).toBe('bob');
    const approval = await system.waitForApproval(call.callId, 'carol');
    expect(approval.request.requester).toBe('bob');
    // Separation of duties compares the same identity in both services: bob may not decide his own run.
    const own = await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', {
      decision: 'approve',
    });
    expect(own.status).toBe(403);
    expect((await system.service('api')).restarts).toBe(before);
  });

  it('refuses a run start without a credential, or with an unknown token', async () => {
    const body = { agent: 'ops', input: 'hi', script: [{ text: 'hi' }] };
    const none = await worker<{ message: string }>('POST', '/runs', undefined, body);
    expect(none.status).toBe(401);
    expect(none.json.message).toBe('a credential is required: send "Authorization: Bearer <token>"');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const res = await fetch(`${system.workerUrl}/runs`, {
      method: 'POST',
      headers: { Authorization: 'Bearer not-a-token', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toBe(
      'credential refused: the token is not valid',
    );
  });

  it('lets a viewer ask only in its own name: RBAC refuses the confirm-tier call, nobody is asked', async () => {
    const runId = await system.startRun(
      [
        { toolCalls: [{ id: 'id-mallory-1', name: 'restart_service', args: { service: 'id-m' } }] },
        { text: 'x' },
      ],
      {},
      'mallory',
    );
    const view = await system.waitForStatus(runId, 'completed', 15_000, 'mallory');
    expect(view.userId).toBe('mallory');
    expect(view.messages.find((m) => m.role === 'tool')).toMatchObject({
      content: expect.stringContaining('lacks permission "tool:restart_service"'),
    });
    expect((await system.api('GET', '/approvals/id-mallory-1', 'bob')).status).toBe(404);
  });

  it('lets a machine client act for a user only with actAs, and records both in the run and the audit', async () => {
    const started = await worker<{ runId: string }>('POST', '/runs', 'ops-bot', {
      agent: 'ops',
      onBehalfOf: 'alice',
      input: 'nightly restart',
      script: restartScript('id-bot'),
    });
    expect(started.status).toBe(202);
    const { runId } = started.json;
    const call = await system.waitForPendingCall(runId, 'alice');
    expect(await system.run(runId, 'ops-bot')).toMatchObject({ userId: 'alice', submittedBy: 'ops-bot' });
    const request = await system.waitForApproval(call.callId);
    expect(request.request).toMatchObject({ requester: 'alice', submittedBy: 'ops-bot' });
    const audit = await system.api<AuditEntry[]>('GET', `/audit?runId=${runId}`, 'auditor');
    expect(audit.json.find((e) => e.type === 'run.started')).toMatchObject({
      actor: 'ops-bot',
      detail: { onBehalfOf: 'alice' },
    });

    for (const [as, onBehalfOf] of [
      ['ops-bot', 'bob'], // not in its actAs list
      ['bob', 'alice'], // a person never acts for someone else
    ]) {
      const refused = await worker<{ message: string }>('POST', '/runs', as, {
        agent: 'ops',
        onBehalfOf,
        input: 'x',
        script: [{ text: 'x' }],
      });
      expect({ as, status: refused.status }).toEqual({ as, status: 403 });
      expect(refused.json.message).toContain(`may not start runs for "${onBehalfOf}"`);
    }
  });
});

describe('finding 2: nobody reads a run that is not theirs', () => {
  let runId: string;
  beforeAll(async () => {
    runId = await system.startRun(restartScript('id-read'), { input: 'the secret input' });
    await system.waitForApproval((await system.waitForPendingCall(runId)).callId);
  });

  it.each([
    ['no credential', undefined, 401],
    ['another requester', 'mallory', 404],
    ['an approver of another group', 'dave', 404],
    ['the requester', 'alice', 200],
    ['an approver the call was routed to', 'carol', 200],
    ['a runs-reader', 'auditor', 200],
  ])('GET /runs/:id as %s (%s) → %d', async (_who, as, status) => {
    const view = await worker<RunView>('GET', `/runs/${runId}`, as);
    expect(view.status).toBe(status);
    if (status === 200) expect(view.json.messages[0]).toEqual({ role: 'user', content: 'the secret input' });
    else expect(JSON.stringify(view.json)).not.toContain('the secret input');
  });

  it.each([
    ['no credential', undefined, 401],
    ['another requester', 'mallory', 404],
    ['the requester', 'alice', 200],
  ])('GET /runs/:id/events as %s (%s) → %d', async (_who, as, status) => {
    const res = await sseStatus(`${system.workerUrl}/runs/${runId}/events`, as ? bearer(as) : {});
    expect(res).toBe(status);
  });

  it.each([
    ['no credential', undefined, 401],
    ['a principal without metrics-reader', 'alice', 403],
    ['a metrics-reader', 'scraper', 200],
  ])('/metrics of both services as %s (%s) → %d', async (_who, as, status) => {
    for (const url of [system.workerUrl, system.approvalUrl]) {
      const res = await fetch(`${url}/metrics`, { headers: as ? bearer(as) : {} });
      expect({ url, status: res.status }).toEqual({ url, status });
    }
  });

  it('needs a credential for /demo/infra', async () => {
    expect((await worker('GET', '/demo/infra')).status).toBe(401);
    expect((await worker('GET', '/demo/infra', 'alice')).status).toBe(200);
  });
});

describe('finding 2 (deployment settings): /metrics on a port of its own, no /demo/infra without the demo', () => {
  const prefixes = uniquePrefixes('identity-ports');
  let alone: RunningAgentWorker;
  afterAll(async () => {
    await alone?.close();
    await deletePrefixedKeys(prefixes);
  });

  it('serves /metrics only on METRICS_PORT, and has no /demo/infra when the simulated infrastructure is off', async () => {
    const metricsPort = await freePort();
    alone = await startAgentWorker(
      workerEnv(prefixes, { METRICS_PORT: String(metricsPort), SEED_DEMO_INFRA: 'false' }),
      { port: 0, host: '127.0.0.1' },
    );
    expect(alone.metricsUrl).toBe(`http://127.0.0.1:${metricsPort}`);
    const scraped = await fetch(`${alone.metricsUrl}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('countersign_runs_started_total');
    expect((await fetch(`${alone.url}/metrics`, { headers: bearer('scraper') })).status).toBe(404);
    expect((await fetch(`${alone.url}/demo/infra`, { headers: bearer('alice') })).status).toBe(404);
  });
});

describe('finding 3: the live stream carries only the signed-in approver’s requests', () => {
  it('tells bob about a restart (his group) and dave about a scale (his), never the other way round', async () => {
    const bob = await followInbox('bob');
    const dave = await followInbox('dave');
    try {
      const restartRun = await system.startRun(restartScript('id-live'));
      const restart = await system.waitForPendingCall(restartRun);
      const scaleRun = await system.startRun([
        { toolCalls: [{ name: 'scale_service', args: { service: 'id-live', replicas: 3 } }] },
        { text: 'scaled' },
      ]);
      const scale = await system.waitForPendingCall(scaleRun);
      await waitFor(() => bob.callIds.has(restart.callId) && dave.callIds.has(scale.callId), 'both changes');
      // Nothing else arrives later: both requests are stored and announced by now.
      await system.waitForApproval(scale.callId, 'dave');
      expect(bob.callIds.has(scale.callId)).toBe(false);
      expect(dave.callIds.has(restart.callId)).toBe(false);
    } finally {
      bob.close();
      dave.close();
    }
  });
});

describe('finding 4: another site cannot sign a browser in (login CSRF), and no token goes in an address', () => {
  it('refuses a cross-site post to the session endpoint and leaves the signed-in session alone', async () => {
    const carol = await signInToInbox(system.approvalUrl, { token: testToken('carol') });
    expect(carol.status).toBe(303);

    const attacks: [string, Record<string, string>, boolean][] = [
      ['a cross-site form', { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }, false],
      ['a sandboxed frame (Origin: null)', { Origin: 'null' }, true],
      ['a post without the page’s CSRF token', {}, false],
    ];
    for (const [what, headers, withCsrf] of attacks) {
      const form = withCsrf ? await signInForm(system.approvalUrl) : undefined;
      const res = await fetch(`${system.approvalUrl}/inbox/session`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: [carol.session, form?.csrfCookie].filter(Boolean).join('; '),
          ...headers,
        },
        body: new URLSearchParams({ token: testToken('bob'), csrf: form?.csrf ?? 'guessed' }).toString(),
      });
      expect({ what, status: res.status }).toEqual({ what, status: 403 });
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const page = await fetch(`${system.approvalUrl}/inbox`, { headers: { Cookie: carol.session! } });
    expect(await page.text()).toContain('Approvals waiting for Carol');
  });

  it('does not sign in from a token in the address', async () => {
    const res = await fetch(`${system.approvalUrl}/inbox?token=${testToken('bob')}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie') ?? '').not.toContain('countersign_inbox=');
  });
});

describe('finding 8: an email link has one spelling and one use', () => {
  it('refuses another spelling of a link that decodes to the same token', async () => {
    const before = (await system.service('web')).restarts;
    const runId = await system.startRun(restartScript('web'));
    const call = await system.waitForPendingCall(runId);
    const { link } = await system.mailTo('bob', call.callId);
    const [base, token] = link.split('/approve/');
    const respelled = `${base}/approve/${token.replace('.', '.=')}`;
    const post = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'decision=approve',
      });
    expect((await post(respelled)).status).toBe(400);
    expect((await post(link)).status).toBe(200);
    await system.waitForStatus(runId, 'completed');
    expect((await system.service('web')).restarts).toBe(before + 1);
  });
});

describe('OIDC bearer tokens (PRINCIPALS_CONFIG oidc)', () => {
  const prefixes = uniquePrefixes('identity-oidc');
  let issuer: http.Server;
  let jwksUrl: string;
  let key: KeyLike;
  let otherKey: KeyLike;
  let oidcWorker: RunningAgentWorker;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    issuer = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(issuer.address() as { port: number }).port}/jwks`;
    const principals = TEST_PRINCIPALS.map(({ id, name }) => ({
      id,
      name,
      tokens: [{ sha256: tokenSha256(testToken(id)) }],
      ...(id === 'alice' ? { oidcSubject: 'alice@corp.example' } : {}),
    }));
    oidcWorker = await startAgentWorker(
      workerEnv(prefixes, {
        PRINCIPALS_CONFIG: JSON.stringify({
          principals,
          oidc: { issuer: 'https://sso.corp.example', audience: 'countersign', jwksUrl, claim: 'email' },
        }),
      }),
      { port: 0, host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await oidcWorker?.close();
    await new Promise((resolve) => issuer?.close(resolve));
    await deletePrefixedKeys(prefixes);
  });

  const jwt = (
    claims: Record<string, unknown>,
    options: { key?: KeyLike; audience?: string; expiresIn?: string } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('https://sso.corp.example')
      .setAudience(options.audience ?? 'countersign')
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m')
      .sign(options.key ?? key);

  const start = async (token: string) => {
    const res = await fetch(`${oidcWorker.url}/runs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent: 'ops', input: 'hi', script: [{ text: 'hello' }] }),
    });
    return { status: res.status, json: (await res.json()) as { runId?: string; message?: string } };
  };

  it('accepts a token of the issuer whose claim names a principal, and the run is that principal’s', async () => {
    const { status, json } = await start(await jwt({ email: 'alice@corp.example' }));
    expect(status).toBe(202);
    const view = await waitFor(async () => {
      const res = await fetch(`${oidcWorker.url}/runs/${json.runId}`, { headers: bearer('alice') });
      const run = (await res.json()) as RunView;
      return run.status === 'completed' ? run : undefined;
    }, 'the OIDC run');
    expect(view.userId).toBe('alice');
  });

  it.each([
    ['another audience', { email: 'alice@corp.example' }, { audience: 'someone-else' }, '"aud" claim'],
    ['an expired token', { email: 'alice@corp.example' }, { expiresIn: '-1m' }, 'has expired'],
    ['a key the issuer never published', { email: 'alice@corp.example' }, { key: 'other' }, 'not valid'],
    ['a subject no principal has', { email: 'mallet@corp.example' }, {}, 'names no known principal'],
    ['no claim at all', { sub: 'x' }, {}, 'has no "email" claim'],
  ])('refuses %s', async (_what, claims, options, message) => {
    const token = await jwt(claims, {
      ...options,
      key: (options as { key?: string }).key === 'other' ? otherKey : key,
    } as { key?: KeyLike; audience?: string; expiresIn?: string });
    const { status, json } = await start(token);
    expect(status).toBe(401);
    expect(json.message).toContain(message);
  });
});

/** The HTTP status an SSE endpoint answers with (the stream is closed at once). */
function sseStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.on('error', reject);
  });
}

/** An approver's inbox live stream, opened with their bearer token: the call IDs it announced. */
async function followInbox(as: string): Promise<{ callIds: Set<string>; close(): void }> {
  const callIds = new Set<string>();
  return new Promise((resolve, reject) => {
    const req = http.get(`${system.approvalUrl}/inbox/events`, { headers: bearer(as) }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`inbox events answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
          buffer = buffer.slice(end + 2);
          if (data) callIds.add((JSON.parse(data) as ApprovalView['request']).callId);
        }
      });
      resolve({ callIds, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

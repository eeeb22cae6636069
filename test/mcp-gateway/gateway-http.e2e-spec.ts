// Issue 24, finding 3: one principal must not be able to end anyone else's MCP gateway sessions, nor flood the gateway.
// Driven as the attacker did, through the gateway's real HTTP endpoint (raw JSON-RPC over fetch, and the official
// client for the victims), with the rate-limit counters in the real Redis. Sessions are capped per principal (its own
// longest-idle session makes room), a global ceiling refuses instead of evicting, and session opens and tool calls are
// rate limited per principal (429 + Retry-After).
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { GatewayHarness } from '../support/gateway-harness';
import { testToken } from '../support/principals';

jest.setTimeout(120_000);

const SMALL_CAPS = { MAX_SESSIONS_PER_PRINCIPAL: '3', MAX_SESSIONS: '10' };

interface Reply {
  status: number;
  retryAfter: string | null;
  sessionId: string | null;
  body: string;
}

let nextId = 1;

/** One JSON-RPC message POSTed to the endpoint as `as` (on `sessionId` when given); the whole answer read. */
async function post(url: string, as: string, message: object, sessionId?: string): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${testToken(as)}`,
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...message }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    sessionId: res.headers.get('mcp-session-id'),
    body: await res.text(),
  };
}

const initialize = (url: string, as: string) =>
  post(url, as, {
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: as, version: '1' },
    },
  });

/** A session of `as`, opened with a raw initialize. */
async function open(url: string, as: string): Promise<string> {
  const reply = await initialize(url, as);
  expect({ as, status: reply.status, body: reply.status === 200 ? '' : reply.body }).toEqual({
    as,
    status: 200,
    body: '',
  });
  return reply.sessionId!;
}

const list = (url: string, as: string, sessionId: string) =>
  post(url, as, { method: 'tools/list' }, sessionId);

const call = (url: string, as: string, sessionId: string, name: string, args: object, extra: object = {}) =>
  post(url, as, { method: 'tools/call', params: { name, arguments: args, ...extra } }, sessionId);

/** The HTTP status of a tools/list on each session: 200 while it lives, 404 once it ended. */
async function statuses(url: string, as: string, sessions: string[]): Promise<number[]> {
  return Promise.all(sessions.map(async (id) => (await list(url, as, id)).status));
}

function expectTooMany(reply: Reply, variable: string, what: string): void {
  expect({ status: reply.status, body: reply.body }).toEqual({
    status: 429,
    body: expect.stringContaining(variable),
  });
  expect(reply.body).toContain(what);
  const seconds = Number(reply.retryAfter);
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

describe('MCP gateway sessions and rate limits per principal', () => {
  let h: GatewayHarness;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway-sessions');
  });
  afterAll(async () => {
    await h?.close();
  });

  it("1,010 session opens by mallory do not end alice's session (the attack of the finding)", async () => {
    const gateway = await h.startGateway();
    const alice = await h.client(gateway.url!, 'alice');
    await alice.listTools();
    for (let sent = 0; sent < 1010; sent += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, 1010 - sent) }, () => initialize(gateway.url!, 'mallory')),
      );
      // Opened, or ended at once by one of her own newer sessions: never a failure of the gateway.
      expect(batch.filter((reply) => reply.status !== 200 && reply.status !== 404)).toEqual([]);
    }
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name)).toContain('ops__restart_service');
    const status = await alice.callTool({ name: 'ops__get_service_status', arguments: { service: 'web' } });
    expect(status.isError).toBeFalsy();
  });

  it("at its cap a principal's own longest-idle session ends, never another principal's", async () => {
    const gateway = await h.startGateway({}, SMALL_CAPS);
    const url = gateway.url!;
    const alice = await h.client(url, 'alice');
    await alice.listTools();
    const [m1, m2, m3] = [await open(url, 'mallory'), await open(url, 'mallory'), await open(url, 'mallory')];
    expect(await statuses(url, 'mallory', [m1, m3])).toEqual([200, 200]); // m2 is now the longest idle
    const m4 = await open(url, 'mallory');

    expect(await statuses(url, 'mallory', [m1, m2, m3, m4])).toEqual([200, 404, 200, 200]);
    expect((await list(url, 'mallory', m2)).body).toContain('unknown session');
    expect((await alice.listTools()).tools.length).toBeGreaterThan(2);
  });

  it('past the global ceiling a new session is refused (503), and no session ends for it', async () => {
    const gateway = await h.startGateway({}, SMALL_CAPS);
    const url = gateway.url!;
    const held: [string, string][] = [];
    for (const as of ['alice', 'bob', 'mallory'])
      for (let i = 0; i < 3; i++) held.push([as, await open(url, as)]);
    held.push(['carol', await open(url, 'carol')]);

    const refused = await initialize(url, 'dave');
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('this server holds at most 10 sessions, all in use');
    for (const [as, id] of held)
      expect({ as, status: (await list(url, as, id)).status }).toEqual({ as, status: 200 });

    // A principal at its own cap still replaces its own session; and once one ends, dave gets in.
    const mallorys = held.filter(([as]) => as === 'mallory').map(([, id]) => id);
    await open(url, 'mallory');
    expect(await statuses(url, 'mallory', mallorys)).toEqual([404, 200, 200]);
    const [, carols] = held.find(([as]) => as === 'carol')!;
    const ended = await fetch(url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${testToken('carol')}`, 'mcp-session-id': carols },
    });
    expect(ended.status).toBe(200);
    await open(url, 'dave');
  });

  it('session opens past RATE_LIMIT_SESSION_OPENS get 429 with Retry-After; another principal still opens', async () => {
    const gateway = await h.startGateway({}, { RATE_LIMIT_SESSION_OPENS: '3/1m' });
    const url = gateway.url!;
    // The counts of one deployment are shared by its gateways: principals no other test opened sessions for.
    const held = [await open(url, 'auditor'), await open(url, 'auditor'), await open(url, 'auditor')];
    const refused = await initialize(url, 'auditor');
    expectTooMany(refused, 'RATE_LIMIT_SESSION_OPENS', 'too many session opens by auditor: at most 3/1m');
    expect(refused.sessionId).toBeNull();
    expect(await statuses(url, 'auditor', held)).toEqual([200, 200, 200]);
    await open(url, 'other-bot');
  });

  it('tool calls past RATE_LIMIT_TOOL_CALLS get 429 with Retry-After (tasks count too); listing does not', async () => {
    const gateway = await h.startGateway({}, { RATE_LIMIT_TOOL_CALLS: '3/1m' });
    const url = gateway.url!;
    const session = await open(url, 'bob');
    const status = (service: string) => call(url, 'bob', session, 'ops__get_service_status', { service });
    expect((await status('web')).status).toBe(200);
    expect((await status('api')).status).toBe(200);
    const task = await call(
      url,
      'bob',
      session,
      'notes__write_note',
      { text: 'as a task' },
      { task: { ttl: 60_000 } },
    );
    expect({ status: task.status, task: task.body.includes('"taskId"') }).toEqual({
      status: 200,
      task: true,
    });

    const before = h.notes.calls.length;
    expectTooMany(
      await status('payments'),
      'RATE_LIMIT_TOOL_CALLS',
      'too many tool calls by bob: at most 3/1m',
    );
    const refusedTask = await call(
      url,
      'bob',
      session,
      'notes__lookup',
      { key: 'x' },
      { task: { ttl: 60_000 } },
    );
    expect(refusedTask.status).toBe(429);
    expect(h.notes.calls.length).toBe(before);
    expect((await list(url, 'bob', session)).status).toBe(200);

    const alice = await h.client(url, 'alice');
    const hers = await alice.callTool({ name: 'ops__get_service_status', arguments: { service: 'web' } });
    expect(hers.isError).toBeFalsy();
  });

  it('counts a machine principal under RATE_LIMIT_TOOL_CALLS_MACHINE', async () => {
    const gateway = await h.startGateway(
      {},
      { RATE_LIMIT_TOOL_CALLS: '1/1m', RATE_LIMIT_TOOL_CALLS_MACHINE: '3/1m' },
    );
    const url = gateway.url!;
    const session = await open(url, 'ops-bot');
    for (let i = 0; i < 3; i++)
      expect((await call(url, 'ops-bot', session, 'ops__list_services', {})).status).toBe(200);
    expectTooMany(
      await call(url, 'ops-bot', session, 'ops__list_services', {}),
      'RATE_LIMIT_TOOL_CALLS_MACHINE',
      'too many tool calls by ops-bot: at most 3/1m',
    );
  });
});

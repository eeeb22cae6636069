// Plain HTTP tools (method, URL template, JSON schema of the arguments, secret headers, timeout) against a real local
// HTTP API that records every request it receives: the count of requests is the proof of what ran.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatMessage, RunView } from '@countersign/contracts';
import { ToolCatalog } from '@countersign/shared-records';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { WorkerHarness } from '../support/agent-worker-harness';
import { writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';

jest.setTimeout(60_000);

interface Received {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

/** A stand-in for an internal API: tickets, a slow endpoint, a failing one, a redirect, a large answer. */
class TicketsApi {
  readonly requests: Received[] = [];
  private server?: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer(async (req, res) => {
      const body = await readBody(req);
      this.requests.push({
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization,
        body,
      });
      const path = new URL(req.url!, 'http://x').pathname;
      if (path === '/slow') return void setTimeout(() => res.end('late'), 5_000).unref();
      if (path === '/broken') return void res.writeHead(500).end('database unavailable');
      if (path === '/moved') return void res.writeHead(302, { location: 'http://example.invalid/x' }).end();
      if (path === '/large') return void res.end('y'.repeat(10_000));
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ method: req.method, path, query: new URL(req.url!, 'http://x').search, body }),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  count(method: string, prefix: string): number {
    return this.requests.filter((r) => r.method === method && r.url.startsWith(prefix)).length;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const TOKEN = 'tickets-token-5bd91e';

function httpToolsConfig(base: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const auth = { Authorization: { $secret: 'TICKETS_TOKEN', prefix: 'Bearer ' } };
  return {
    httpTools: {
      open_ticket: {
        description: 'Opens a ticket in a project.',
        method: 'POST',
        url: `${base}/projects/{project}/tickets`,
        args: {
          type: 'object',
          properties: { project: { type: 'string', minLength: 1 }, title: { type: 'string' } },
          required: ['project', 'title'],
          additionalProperties: false,
        },
        headers: auth,
        preview: 'a ticket “{title}” in {project}',
      },
      get_ticket: {
        description: 'Reads a ticket.',
        method: 'GET',
        url: `${base}/tickets/{id}`,
        args: {
          type: 'object',
          properties: { id: { type: 'string' }, fields: { type: 'array', items: { type: 'string' } } },
          required: ['id'],
        },
        headers: auth,
        tier: 'auto',
      },
      slow_report: { description: 'Slow.', method: 'GET', url: `${base}/slow`, tier: 'auto', timeoutMs: 300 },
      broken: { description: 'Fails.', method: 'GET', url: `${base}/broken`, tier: 'auto' },
      moved: { description: 'Redirects.', method: 'GET', url: `${base}/moved`, tier: 'auto', headers: auth },
      large: {
        description: 'Large.',
        method: 'GET',
        url: `${base}/large`,
        tier: 'auto',
        maxResultBytes: 256,
      },
      ...overrides,
    },
    agents: {
      api: {
        tools: ['open_ticket', 'get_ticket', 'slow_report', 'broken', 'moved', 'large'],
        roles: { operator: { allow: ['tool:*'] } },
        users: { alice: ['operator'] },
      },
    },
  };
}

const contents = (view: RunView) =>
  view.messages
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool')
    .map((m) => m.content);

describe('HTTP tools', () => {
  const h = new WorkerHarness('http-tools');
  const api = new TicketsApi();
  let worker: RunningAgentWorker;
  let url: string;

  async function runTurn(calls: { name: string; args: Record<string, unknown> }[]): Promise<RunView> {
    const runId = await h.startRun(url, { agent: 'api', script: [{ toolCalls: calls }, { text: 'done' }] });
    return h.waitForStatus(url, runId, 'completed');
  }

  beforeAll(async () => {
    await api.start();
    worker = await h.startWorker({
      AGENTS_CONFIG: writeConfig(httpToolsConfig(`http://127.0.0.1:${api.port}`)),
      TICKETS_TOKEN: TOKEN,
    });
    url = worker.url;
  });
  afterAll(async () => {
    await h.cleanup();
    await api.stop();
  });

  it('runs an auto GET at once: path placeholder encoded, other arguments in the query, the secret header sent', async () => {
    const view = await runTurn([{ name: 'get_ticket', args: { id: 'T 1/2', fields: ['a', 'b'] } }]);
    expect(JSON.parse(contents(view)[0])).toEqual({
      method: 'GET',
      path: '/tickets/T%201%2F2',
      query: '?fields=a&fields=b',
      body: '',
    });
    expect(api.requests.at(-1)!.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('parks a POST (confirm by default) and sends exactly one request once approved, the rest of the arguments as JSON', async () => {
    const runId = await h.startRun(url, {
      agent: 'api',
      script: [
        { toolCalls: [{ name: 'open_ticket', args: { project: 'ops', title: 'disk' } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({ toolName: 'open_ticket', tier: 'confirm' });
    expect(api.count('POST', '/projects/ops/tickets')).toBe(0);
    // Approvers are shown what the tool is from the tool catalog, its schema as configured, and the preview its
    // config declares, filled from the call's arguments.
    const request = await waitFor(() => h.approvalRequest(call.callId), 'the request');
    expect(request?.context?.preview).toBe('a ticket “disk” in ops');
    const catalog = await new ToolCatalog(h.redis, h.prefixes.keyPrefix).get([request!.toolDefinitionHash]);
    expect(catalog.get(request!.toolDefinitionHash)).toMatchObject({
      name: 'open_ticket',
      description: 'Opens a ticket in a project.',
      tier: 'confirm',
      argsSchema: { required: ['project', 'title'], additionalProperties: false },
    });
    const decision = h.decision(runId, call, 'approve');
    await Promise.all([h.publishDecision(decision), h.publishDecision(decision, `again-${call.callId}`)]);
    await h.waitForStatus(url, runId, 'completed');
    expect(api.count('POST', '/projects/ops/tickets')).toBe(1);
    expect(JSON.parse(api.requests.at(-1)!.body)).toEqual({ title: 'disk' });
  });

  it('sends nothing when the call is denied', async () => {
    const runId = await h.startRun(url, {
      agent: 'api',
      script: [
        { toolCalls: [{ name: 'open_ticket', args: { project: 'sec', title: 'x' } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    await h.publishDecision(h.decision(runId, call, 'deny'));
    await h.waitForStatus(url, runId, 'completed');
    expect(api.count('POST', '/projects/sec')).toBe(0);
  });

  it('checks the arguments against the schema, naming the field, and sends nothing', async () => {
    const before = api.requests.length;
    const view = await runTurn([{ name: 'get_ticket', args: { fields: 'a' } }]);
    expect(contents(view)[0]).toMatch(
      /Invalid arguments for tool "get_ticket": .*id: is required.*fields: must be array/,
    );
    expect(api.requests.length).toBe(before);
  });

  it('tells the model about a timeout, an error status, a redirect it did not follow, and cuts a large body', async () => {
    const view = await runTurn([
      { name: 'slow_report', args: {} },
      { name: 'broken', args: {} },
      { name: 'moved', args: {} },
      { name: 'large', args: {} },
    ]);
    const [slow, broken, moved, large] = contents(view);
    expect(slow).toMatch(/\/slow did not answer within 300 ms; the request was abandoned/);
    expect(broken).toBe('Tool "broken" failed: HTTP 500: database unavailable');
    expect(moved).toBe(
      'Tool "moved" failed: HTTP 302: redirects are not followed (Location: http://example.invalid/x)',
    );
    expect(large).toBe(
      `${'y'.repeat(256)}\n[truncated: the result was longer than 256 bytes; only the first 256 are shown]`,
    );
  });

  it('says the API is unreachable when it is down, and the run goes on', async () => {
    await api.stop();
    try {
      const view = await runTurn([{ name: 'get_ticket', args: { id: '1' } }]);
      expect(contents(view)[0]).toMatch(/is unreachable .*nothing was sent/);
      expect(view.result).toBe('done');
    } finally {
      await api.start();
    }
  });

  it('asks again about a parked call whose tool now points elsewhere (a config change), and sends nothing first', async () => {
    const runId = await h.startRun(url, {
      agent: 'api',
      script: [
        { toolCalls: [{ name: 'open_ticket', args: { project: 'moved', title: 't' } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    await worker.close();
    // Redeployed with the tool pointing at another path: what the approver looks at is no longer what would run.
    const base = `http://127.0.0.1:${api.port}`;
    const changed = httpToolsConfig(base);
    (changed.httpTools as Record<string, { url: string }>).open_ticket.url =
      `${base}/v2/projects/{project}/tickets`;
    worker = await h.startWorker({ AGENTS_CONFIG: writeConfig(changed), TICKETS_TOKEN: TOKEN });
    url = worker.url;

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const again = await waitFor(() => h.approvalRequest(call.callId, 1), 'the call asked about again');
    expect(again).toMatchObject({ reason: 'definition_changed' });
    expect(api.count('POST', '/projects/moved')).toBe(0);
    expect(api.count('POST', '/v2/projects/moved')).toBe(0);
    await h.publishDecision(
      h.decision(runId, { ...call, requestId: again!.requestId }, 'approve', { attempt: 1 }),
    );
    await h.waitForStatus(url, runId, 'completed');
    expect(api.count('POST', '/v2/projects/moved')).toBe(1);
  });
});

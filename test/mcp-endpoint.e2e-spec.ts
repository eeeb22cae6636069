// The MCP server side of libs/tool-providers (McpHttpEndpoint) over a real HTTP server, with the official client:
// sessions belong to the caller that opened them and are bounded per caller (a caller at its cap loses its own
// longest-idle session, never another's) and in all (past the ceiling a new session is refused, none is ended), and
// the endpoint asks its rate limit before a session opens and before each tool call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  McpHttpEndpoint,
  type McpHttpEndpointOptions,
  type LimitedRequest,
} from '@countersign/tool-providers';

describe('McpHttpEndpoint', () => {
  const running: { http: Server; endpoint: McpHttpEndpoint }[] = [];
  const clients: Client[] = [];
  let pings = 0;

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
    for (const { http, endpoint } of running.splice(0)) {
      await endpoint.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  /** An endpoint serving `ping`, whose callers name themselves in a bearer token. */
  async function start(
    options: Partial<McpHttpEndpointOptions> = {},
  ): Promise<{ endpoint: McpHttpEndpoint; url: URL }> {
    const endpoint = new McpHttpEndpoint({
      name: 'sessions',
      version: '1',
      tools: () => [
        {
          name: 'ping',
          description: 'pong',
          inputSchema: { type: 'object' },
          call: async () => {
            pings++;
            return 'pong';
          },
        },
      ],
      authenticate: async (req) =>
        req.headers.authorization?.startsWith('Bearer ')
          ? req.headers.authorization.slice(7)
          : { status: 401, message: 'token required' },
      ...options,
    });
    const http = createServer((req, res) => void endpoint.handle(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    running.push({ http, endpoint });
    return { endpoint, url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`) };
  }

  async function connect(
    url: URL,
    caller: string,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${caller}` } },
    });
    const client = new Client({ name: caller, version: '1' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const pong = [{ type: 'text', text: 'pong' }];

  it("at its cap a caller loses its own longest-idle session, never another caller's", async () => {
    const { endpoint, url } = await start({ maxSessionsPerCaller: 2, maxSessions: 10 });
    const other = await connect(url, 'b');
    const first = await connect(url, 'a');
    const second = await connect(url, 'a');
    await first.client.callTool({ name: 'ping', arguments: {} }); // second is now a's longest idle
    const third = await connect(url, 'a');

    expect(endpoint.sessionCount).toBe(3);
    await expect(second.client.listTools()).rejects.toThrow(/unknown session/);
    expect((await first.client.callTool({ name: 'ping', arguments: {} })).content).toEqual(pong);
    expect((await third.client.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
    expect((await other.client.callTool({ name: 'ping', arguments: {} })).content).toEqual(pong);
  });

  it('past maxSessions refuses a new session (503) and ends none', async () => {
    const { endpoint, url } = await start({ maxSessionsPerCaller: 1, maxSessions: 2 });
    const a = await connect(url, 'a');
    const b = await connect(url, 'b');
    await expect(connect(url, 'c')).rejects.toThrow(/at most 2 sessions, all in use/);
    expect(endpoint.sessionCount).toBe(2);
    expect((await a.client.listTools()).tools).toHaveLength(1);
    expect((await b.client.listTools()).tools).toHaveLength(1);
    // A caller at its own cap still replaces its own session.
    await connect(url, 'a');
    await expect(a.client.listTools()).rejects.toThrow(/unknown session/);
    expect((await b.client.listTools()).tools).toHaveLength(1);
  });

  it('asks its rate limit before a session opens and before each tool call: a refusal is the answer', async () => {
    const asked: [string, LimitedRequest][] = [];
    let refuse: LimitedRequest | undefined;
    const { url } = await start({
      rateLimit: async (caller, request) => {
        asked.push([caller, request]);
        return request === refuse
          ? { status: 429, message: `too many ${request}s`, retryAfterSeconds: 7 }
          : undefined;
      },
    });
    const { client, transport } = await connect(url, 'a');
    await client.listTools();
    await client.callTool({ name: 'ping', arguments: {} });
    expect(asked).toEqual([
      ['a', 'session-open'],
      ['a', 'tool-call'],
    ]);

    refuse = 'tool-call';
    const before = pings;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer a',
        'mcp-session-id': transport.sessionId!,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'ping' } }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.text()).toContain('too many tool-calls');
    expect(pings).toBe(before);

    refuse = 'session-open';
    await expect(connect(url, 'a')).rejects.toThrow(/too many session-opens/);
  });

  it("refuses another caller's session, and a request without a credential", async () => {
    const { url } = await start();
    const { transport } = await connect(url, 'owner');
    const request = (authorization?: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
    expect((await request('Bearer intruder')).status).toBe(403);
    expect((await request()).status).toBe(401);
    expect((await request('Bearer owner')).status).toBe(200);
  });
});

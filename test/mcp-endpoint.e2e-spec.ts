// The MCP server side of libs/tool-providers (McpHttpEndpoint) over a real HTTP server, with the official client:
// sessions are bounded (the longest idle one ends first) and belong to the caller that opened them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpHttpEndpoint } from '@countersign/tool-providers';

describe('McpHttpEndpoint', () => {
  let http: Server;
  let endpoint: McpHttpEndpoint;
  let url: URL;
  const clients: Client[] = [];

  beforeAll(async () => {
    endpoint = new McpHttpEndpoint({
      name: 'sessions',
      version: '1',
      maxSessions: 2,
      tools: () => [
        { name: 'ping', description: 'pong', inputSchema: { type: 'object' }, call: async () => 'pong' },
      ],
      authenticate: async (req) =>
        req.headers.authorization?.startsWith('Bearer ')
          ? req.headers.authorization.slice(7)
          : { status: 401, message: 'token required' },
    });
    http = createServer((req, res) => void endpoint.handle(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await endpoint.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  async function connect(
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

  it('ends the session idle longest when a new one would pass maxSessions', async () => {
    const first = await connect('a');
    const second = await connect('b');
    await second.client.callTool({ name: 'ping', arguments: {} });
    const third = await connect('c');
    expect(endpoint.sessionCount).toBe(2);
    await expect(first.client.listTools()).rejects.toThrow(/unknown session/);
    expect((await second.client.callTool({ name: 'ping', arguments: {} })).content).toEqual([
      { type: 'text', text: 'pong' },
    ]);
    expect((await third.client.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
  });

  it("refuses another caller's session, and a request without a credential", async () => {
    const { transport } = await connect('owner');
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

// The gateway's floor: an MCP proxy with the same SDK transports and HTTP endpoint as the MCP gateway and nothing else
// (no credential check, no policy, no audit, no result handling), relaying each call to one server. What it adds to a
// call is what one more MCP hop over streamable HTTP costs; the gateway's own work is what the gateway adds above it.
// Started by the bench as a child process (PORT, DOWNSTREAM_URL, DOWNSTREAM_TOKEN), like the gateway; GET /health.
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpHttpEndpoint } from '@countersign/tool-providers';

async function main(): Promise<void> {
  const downstream = new Client({ name: 'bare-mcp-proxy', version: '0.1.0' });
  await downstream.connect(
    new StreamableHTTPClientTransport(new URL(process.env.DOWNSTREAM_URL!), {
      requestInit: { headers: { authorization: `Bearer ${process.env.DOWNSTREAM_TOKEN}` } },
    }),
  );
  const endpoint = new McpHttpEndpoint({
    name: 'bare-mcp-proxy',
    version: '0.1.0',
    server: () => {
      const server = new Server(
        { name: 'bare-mcp-proxy', version: '0.1.0' },
        { capabilities: { tools: {} } },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => downstream.listTools());
      server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
        downstream.callTool(request.params, undefined, { signal: extra.signal }),
      );
      return server;
    },
  });
  const http = createServer((req, res) => {
    if (req.url === '/health') return void res.writeHead(200).end('{"status":"ok"}');
    void endpoint.handle(req, res);
  });
  http.listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

main().catch((error: Error) => {
  process.stderr.write(`bare MCP proxy: ${error.message}\n`);
  process.exit(1);
});

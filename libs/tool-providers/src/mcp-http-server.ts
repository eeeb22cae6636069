// An HTTP server for an MCP endpoint: `/mcp` to the endpoint, a public `GET /health`, `/metrics` when the server is
// given its route (the gateway's, behind a credential: libs/platform metricsRoute), 404 for the rest. The ops MCP
// server and the MCP gateway both listen with it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpHttpEndpoint } from './mcp-tool-server';

export interface McpHttpServerOptions {
  endpoint: McpHttpEndpoint;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Whether what the server needs answers (its Redis); public, so it must name nothing. */
  healthy: () => Promise<boolean>;
  /** Answers `/metrics` (it checks its caller itself); unset: 404 there. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface McpHttpServer {
  /** The endpoint's URL (a loopback address when listening on every interface). */
  url: string;
  /** Ends the endpoint's sessions, then its connections, then the server. */
  close(): Promise<void>;
}

export async function serveMcpHttp(options: McpHttpServerOptions): Promise<McpHttpServer> {
  const { endpoint, host } = options;
  const http = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/mcp') return void endpoint.handle(req, res);
    if (path === '/metrics' && options.metrics) return options.metrics(req, res);
    if (path === '/health' && req.method === 'GET') {
      void options.healthy().then((ok) => {
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: ok ? 'ok' : 'redis unreachable' }));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, resolve);
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}/mcp`,
    async close() {
      await endpoint.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// /metrics of every service: on the main port behind a `metrics-reader` credential (MetricsController in a Nest app,
// metricsRoute on a plain Node server such as the MCP gateway's), or, with METRICS_PORT, on a port of its own without
// credentials (bind it to a private scrape network) and not on the main port at all.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { type Authentication, hasRole, RequireRole, type ServiceRole } from './identity';

export const METRICS_REGISTRY = Symbol('MetricsRegistry');
const CONTENT_TYPE = 'text/plain; version=0.0.4';
/** The role a credential needs to read /metrics on a service's main port. */
export const METRICS_ROLE: ServiceRole = 'metrics-reader';

@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  @RequireRole(METRICS_ROLE)
  @Header('Content-Type', CONTENT_TYPE)
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Serves GET /metrics (and nothing else) on host:port. */
export async function startMetricsServer(
  registry: Registry,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res
        .writeHead(404, { 'Content-Type': 'text/plain' })
        .end('not found: this port serves GET /metrics only\n');
      return;
    }
    writeMetrics(registry, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * GET /metrics on the main port of a service served by a plain Node HTTP server: the same rule as MetricsController's
 * guard (no credential or a refused one: 401; without the `metrics-reader` role: 403). `authenticate` names the caller
 * of the request (undefined when it carries no credential).
 */
export function metricsRoute(
  registry: Registry,
  authenticate: (req: IncomingMessage) => Promise<Authentication | undefined>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405, { 'Content-Type': 'application/json', Allow: 'GET' });
      res.end(JSON.stringify({ error: 'GET only' }));
      return;
    }
    authenticate(req).then(
      (result) => {
        if (!result?.ok) {
          res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
          res.end(
            JSON.stringify({
              error: result ? `credential refused: ${result.reason}` : 'a credential is required',
            }),
          );
        } else if (!hasRole(result.principal, METRICS_ROLE)) {
          res.writeHead(403, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: `the "${METRICS_ROLE}" role is required` }));
        } else writeMetrics(registry, res);
      },
      (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`),
    );
  };
}

function writeMetrics(registry: Registry, res: ServerResponse): void {
  registry.metrics().then(
    (text) => res.writeHead(200, { 'Content-Type': CONTENT_TYPE }).end(text),
    (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`),
  );
}

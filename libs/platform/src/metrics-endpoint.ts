// /metrics of either service: on the main port behind a `metrics-reader` credential, or, with METRICS_PORT, on a port
// of its own without credentials (bind it to a private scrape network) and not on the main port at all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { RequireRole } from './identity';

export const METRICS_REGISTRY = Symbol('MetricsRegistry');
const CONTENT_TYPE = 'text/plain; version=0.0.4';

@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  @RequireRole('metrics-reader')
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
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': CONTENT_TYPE }).end(text),
      (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`),
    );
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

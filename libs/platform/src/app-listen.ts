// How an HTTP app (the agent worker, the approval service) starts listening: on its port, and with METRICS_PORT set,
// /metrics on a port of its own beside it; one close() for both.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { type MetricsServer, startMetricsServer } from './metrics-endpoint';

export interface ListenOptions {
  host: string;
  /** 0: any free port (url says which). */
  port: number;
  /** The app's metrics, served on metricsHost:metricsPort when metricsPort is set. */
  registry: Registry;
  metricsHost: string;
  metricsPort?: number;
}

export interface ListeningApp {
  /** http://host:port the app listens on (a wildcard host as 127.0.0.1, port 0 replaced by the real one). */
  url: string;
  /** Where /metrics is served without credentials, when metricsPort is set. */
  metricsUrl?: string;
  /** Closes the app and its metrics port; called again, the same promise. */
  close(): Promise<void>;
}

/** Nothing stays open when either cannot listen (e.g. a port in use, or a job without a handler): the error is thrown. */
export async function listenWithMetrics(
  app: INestApplication,
  options: ListenOptions,
): Promise<ListeningApp> {
  let metrics: MetricsServer | undefined;
  try {
    await app.listen(options.port, options.host);
    if (options.metricsPort !== undefined)
      metrics = await startMetricsServer(options.registry, options.metricsHost, options.metricsPort);
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    metricsUrl: metrics?.url,
    close: () => (closing ??= Promise.all([app.close(), metrics?.close()]).then(() => undefined)),
  };
}

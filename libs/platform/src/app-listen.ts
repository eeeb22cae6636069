// How an HTTP app (the agent worker, the approval service) starts listening: on its port, and with METRICS_PORT set,
// /metrics on a port of its own beside it; one close() for both.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { type MetricsServer, startMetricsServer } from './metrics-endpoint';

/** The variables (in each service's environment) that say where it listens. */
export interface ListenEnv {
  HOST: string;
  PORT: number;
  METRICS_HOST: string;
  /** Set: /metrics is served there without credentials (and not on the main port). */
  METRICS_PORT?: number;
}

export interface ListeningApp {
  /** http://host:port the app listens on (a wildcard host as 127.0.0.1, port 0 replaced by the real one). */
  url: string;
  /** Where /metrics is served without credentials, when METRICS_PORT is set. */
  metricsUrl?: string;
  /** Closes the app and its metrics port; called again, the same promise. */
  close(): Promise<void>;
}

/**
 * Listens where `env` says (`at` overrides HOST and PORT: tests listen on port 0 of 127.0.0.1), and serves `registry`
 * on METRICS_PORT when it is set. Nothing stays open when either cannot listen (e.g. a port in use, or a job without
 * a handler): the error is thrown.
 */
export async function listenWithMetrics(
  app: INestApplication,
  registry: Registry,
  env: ListenEnv,
  at: { host?: string; port?: number } = {},
): Promise<ListeningApp> {
  const host = at.host ?? env.HOST;
  let metrics: MetricsServer | undefined;
  try {
    await app.listen(at.port ?? env.PORT, host);
    if (env.METRICS_PORT !== undefined)
      metrics = await startMetricsServer(registry, env.METRICS_HOST, env.METRICS_PORT);
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`,
    metricsUrl: metrics?.url,
    close: () => (closing ??= Promise.all([app.close(), metrics?.close()]).then(() => undefined)),
  };
}

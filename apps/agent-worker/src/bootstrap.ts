// Builds and starts the agent worker from an environment map: used by main.ts, the demo and the tests.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  applyTrustProxy,
  createLogger,
  loadJsonConfig,
  PinoNestLogger,
  PrincipalsConfigSchema,
  startMetricsServer,
  type MetricsServer,
} from '@countersign/platform';
import { AgentWorkerModule } from './agent-worker.module';
import { loadAgentsConfig } from './config/agents-config.schema';
import { loadWorkerConfig } from './config/worker-config';
import { WorkerMetrics } from './observability/worker-metrics';

export interface RunningAgentWorker {
  app: INestApplication;
  url: string;
  /** Where /metrics is served without credentials, when METRICS_PORT is set. */
  metricsUrl?: string;
  /** Graceful: finishes in-flight jobs (tool calls), then closes workers, queues and Redis. */
  close(): Promise<void>;
  /** SHUTDOWN_TIMEOUT_MS: how long main.ts lets close() run before it exits anyway. */
  shutdownTimeoutMs: number;
}

/** Throws a ConfigError naming the bad variable (or config field) instead of starting. */
export async function startAgentWorker(
  env: Record<string, string | undefined>,
  options: { port?: number; host?: string } = {},
): Promise<RunningAgentWorker> {
  const config = loadWorkerConfig(env);
  const agents = loadAgentsConfig(config.AGENTS_CONFIG);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', config.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  const logger = createLogger('agent-worker', config.LOG_LEVEL);
  const app = await NestFactory.create(AgentWorkerModule.forRoot({ config, agents, principals, logger }), {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
    forceCloseConnections: true,
  });
  applyTrustProxy(app, config.TRUST_PROXY);
  const host = options.host ?? config.HOST;
  try {
    await app.listen(options.port ?? config.PORT, host);
  } catch (error) {
    await app.close(); // e.g. a job without a handler: nothing stays connected
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  let metrics: MetricsServer | undefined;
  if (config.METRICS_PORT !== undefined)
    metrics = await startMetricsServer(
      app.get(WorkerMetrics).registry,
      config.METRICS_HOST,
      config.METRICS_PORT,
    );
  logger.info(
    { url, metricsUrl: metrics?.url, queuePrefix: config.QUEUE_PREFIX, keyPrefix: config.KEY_PREFIX },
    'agent worker listening',
  );

  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    metricsUrl: metrics?.url,
    close: () => (closing ??= Promise.all([app.close(), metrics?.close()]).then(() => undefined)),
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  };
}

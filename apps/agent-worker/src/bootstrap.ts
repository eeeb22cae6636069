// Builds and starts the agent worker from an environment map: used by main.ts, the demo and the tests.
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  applyTrustProxy,
  ConfigError,
  createLogger,
  loadJsonConfig,
  type Logger,
  PinoNestLogger,
  PrincipalsConfigSchema,
  startMetricsServer,
  type MetricsServer,
} from '@countersign/platform';
import { InvalidToolConfigError, SecretSource, ToolProviders } from '@countersign/tool-providers';
import { AgentWorkerModule } from './agent-worker.module';
import { checkRunbookAgents } from './agents/agent-catalog';
import { type AgentsConfig, loadAgentsConfig } from './config/agents-config.schema';
import { loadWorkerConfig } from './config/worker-config';
import { WorkerMetrics } from './observability/worker-metrics';
import { InvalidRunbookError, RunbookLibrary } from './runbooks/runbook-library';

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
  const providers = toolProviders(agents, env, logger);
  const runbooks = loadRunbooks(config.RUNBOOKS_DIR);
  checkRunbookAgents(agents, runbooks);
  const app = await NestFactory.create(
    AgentWorkerModule.forRoot({ config, agents, principals, logger, providers, runbooks }),
    {
      logger: new PinoNestLogger(logger),
      abortOnError: false,
      forceCloseConnections: true,
    },
  );
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

/** The runbooks directory's definitions (none without one); a missing directory or an invalid file refuses start-up. */
function loadRunbooks(dir: string | undefined): RunbookLibrary {
  if (!dir) return RunbookLibrary.of([]);
  if (!existsSync(dir)) throw new ConfigError(`RUNBOOKS_DIR: ${dir} does not exist`);
  try {
    return RunbookLibrary.fromDirectory(dir);
  } catch (error) {
    if (error instanceof InvalidRunbookError)
      throw new ConfigError(`RUNBOOKS_DIR: ${dir}:\n${error.message}`);
    throw error;
  }
}

/** The config's tool providers; secrets are read from `env` when a call needs them, never copied elsewhere. */
function toolProviders(
  agents: AgentsConfig,
  env: Record<string, string | undefined>,
  logger: Logger,
): ToolProviders {
  try {
    return new ToolProviders(agents, { secrets: new SecretSource(env), logger });
  } catch (error) {
    if (error instanceof InvalidToolConfigError) throw new ConfigError(`AGENTS_CONFIG: ${error.message}`);
    throw error;
  }
}

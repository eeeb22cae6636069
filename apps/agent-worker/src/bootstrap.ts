// Builds and starts the agent worker from an environment map: used by main.ts, the demo and the tests.
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  applyTrustProxy,
  ConfigError,
  createLogger,
  type Logger,
  listenWithMetrics,
  PinoNestLogger,
} from '@countersign/platform';
import { InvalidToolConfigError, SecretSource, ToolProviders } from '@countersign/tool-providers';
import { AgentWorkerModule } from './agent-worker.module';
import { checkAdmissionSecrets } from './agents/agent-builder';
import type { AgentsConfig } from './config/agents-config.schema';
import { loadWorkerConfig } from './config/worker-config';
import { WorkerMetrics } from './core/worker-metrics';
import { checkRunbookAgents } from './runbooks/runbook-agents';
import { RunbookLibrary } from './runbooks/runbook-library';
import type { RunHooks } from './runs/run-hooks';

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

export interface StartOptions {
  /** Overrides PORT and HOST (tests listen on port 0 of 127.0.0.1). */
  port?: number;
  host?: string;
  /** Points of a run's life to look in at (none in a deployment; see RunHooks). */
  runHooks?: RunHooks;
}

/** Throws a ConfigError naming the bad variable (or config field) instead of starting. */
export async function startAgentWorker(
  env: Record<string, string | undefined>,
  options: StartOptions = {},
): Promise<RunningAgentWorker> {
  const config = loadWorkerConfig(env);
  const runbooks = RunbookLibrary.load(config.env.RUNBOOKS_DIR);
  checkRunbookAgents(config.agents, runbooks);
  const logger = createLogger('agent-worker', config.env.LOG_LEVEL, config.env.LOG_FILE);
  const providers = toolProviders(config.agents, env, logger);
  checkAdmissionSecrets(config.agents.agents, providers);
  const app = await NestFactory.create(
    AgentWorkerModule.forRoot({ config, runbooks, logger, providers, runHooks: options.runHooks }),
    {
      logger: new PinoNestLogger(logger),
      abortOnError: false,
      forceCloseConnections: true,
    },
  );
  applyTrustProxy(app, config.env.TRUST_PROXY);
  const listening = await listenWithMetrics(app, app.get(WorkerMetrics).registry, config.env, options);
  logger.info(
    {
      url: listening.url,
      metricsUrl: listening.metricsUrl,
      queuePrefix: config.env.QUEUE_PREFIX,
      keyPrefix: config.env.KEY_PREFIX,
    },
    'agent worker listening',
  );
  return {
    app,
    ...listening,
    shutdownTimeoutMs: config.env.SHUTDOWN_TIMEOUT_MS,
  };
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

/**
 * A worker run as a process (main.ts): SIGTERM or SIGINT stop it gracefully (in-flight tool calls finish), within
 * SHUTDOWN_TIMEOUT_MS; a second signal exits at once.
 */
export function stopOnSignals(worker: RunningAgentWorker, logger: Logger): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without finishing in-flight work');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight tool calls');
    // close() waits on Redis for every job it finishes; with Redis gone it would wait forever.
    setTimeout(() => {
      logger.error(
        { timeoutMs: worker.shutdownTimeoutMs },
        'shutdown did not finish in time (Redis unreachable, or a tool call still running): exiting; ' +
          'unfinished jobs are redelivered and interrupted calls asked about again',
      );
      process.exit(1);
    }, worker.shutdownTimeoutMs).unref();
    worker.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

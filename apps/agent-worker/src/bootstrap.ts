// Builds and starts the agent worker from an environment map: used by main.ts, the demo and the tests.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createLogger, PinoNestLogger } from '@countersign/platform';
import { AgentWorkerModule } from './agent-worker.module';
import { loadAgentsConfig } from './config/agents-config.schema';
import { loadWorkerConfig } from './config/worker-config';

export interface RunningAgentWorker {
  app: INestApplication;
  url: string;
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
  const logger = createLogger('agent-worker', config.LOG_LEVEL);
  const app = await NestFactory.create(AgentWorkerModule.forRoot({ config, agents, logger }), {
    logger: new PinoNestLogger(logger),
    abortOnError: false,
    forceCloseConnections: true,
  });
  const host = options.host ?? config.HOST;
  try {
    await app.listen(options.port ?? config.PORT, host);
  } catch (error) {
    await app.close(); // e.g. a job without a handler: nothing stays connected
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  logger.info(
    { url, queuePrefix: config.QUEUE_PREFIX, keyPrefix: config.KEY_PREFIX },
    'agent worker listening',
  );

  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    close: () => (closing ??= app.close()),
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  };
}

// Starts the approval service: validates config (refusing to start with the bad variable named), listens, and
// returns a handle whose close() stops taking work, finishes active jobs and closes connections.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { applyTrustProxy, createLogger, listenWithMetrics, PinoNestLogger } from '@countersign/platform';
import { ApprovalServiceModule } from './approval-service.module';
import { loadApprovalServiceConfig } from './config/approval-service.config';

import { Metrics } from './core/metrics';
import { ServiceAddress } from './core/service-address';
import { setupOpenApi } from './docs/openapi';

export interface RunningApprovalService {
  app: INestApplication;
  /** http://host:port the service listens on (port 0 is replaced by the real one). */
  url: string;
  /** Where /metrics is served without credentials, when METRICS_PORT is set. */
  metricsUrl?: string;
  close(): Promise<void>;
}

export async function startApprovalService(
  env: Record<string, string | undefined>,
  options: { port?: number; host?: string } = {},
): Promise<RunningApprovalService> {
  const config = loadApprovalServiceConfig(env);
  const logger = createLogger('approval-service', config.env.LOG_LEVEL, config.env.LOG_FILE);
  const app = await NestFactory.create<NestExpressApplication>(
    ApprovalServiceModule.register(config, logger),
    {
      rawBody: true, // Slack signatures are computed over the exact bytes
      logger: new PinoNestLogger(logger),
      abortOnError: false,
    },
  );
  app.disable('x-powered-by');
  applyTrustProxy(app, config.env.TRUST_PROXY);
  setupOpenApi(app);

  const listening = await listenWithMetrics(app, app.get(Metrics).registry, config.env, options);
  app.get(ServiceAddress).setListening(listening.url);
  logger.info(
    {
      url: listening.url,
      metricsUrl: listening.metricsUrl,
      slack: Boolean(config.env.SLACK_BOT_TOKEN),
      smtp: Boolean(config.env.SMTP_URL || config.env.SMTP_HOST),
    },
    'approval service listening',
  );
  return { app, ...listening };
}

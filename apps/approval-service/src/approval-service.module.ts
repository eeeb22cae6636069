// Wires the approval service: one feature module per step of a call's life (requests and their intake, notifications,
// decisions, standing rules, votes, timers, the approvals API, the channels approvers use), the audit and health
// routes, and what applies to every route (who is knocking, rate limits). The validated config and the logger come
// in from bootstrap, so nothing here reads the environment.
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  MetricsController,
  PrincipalGuard,
  provideJobCatalog,
  QueueModule,
  RedisConnections,
  RATE_LIMIT_STORAGE,
  rateLimitGuards,
  redisRateLimitStorage,
  REQUEST_AUTHENTICATOR,
  type Logger,
} from '@countersign/platform';
import { approvalServiceJobs, approvalServiceQueues } from './approval-service-jobs';
import { AuditModule } from './audit/audit.module';
import { ApproverAuth } from './auth/approver-auth';
import { AuthModule } from './auth/auth.module';
import { ChannelsModule } from './channels/channels.module';
import type { ApprovalServiceConfig } from './config/approval-service.config';
import { approvalRateLimits } from './config/rate-limits';
import { CoreModule } from './core/core.module';
import { ServiceConfigModule } from './core/service-config.module';
import { ExternalModule } from './external/external.module';
import { ExternalWebhooks } from './external/external-webhooks';
import { HealthModule } from './health/health.module';
import { NotificationProcessor } from './notifications/notification.processor';
import { NotificationsModule } from './notifications/notifications.module';
import { ApprovalRequestProcessor } from './requests/intake/approval-request.processor';
import { IntakeModule } from './requests/intake/intake.module';
import { StandingRulesModule } from './standing-rules/standing-rules.module';
import { TimersModule } from './timers/timers.module';

@Module({})
export class ApprovalServiceModule {
  static register(config: ApprovalServiceConfig, logger: Logger): DynamicModule {
    const rateLimits = rateLimitGuards(approvalRateLimits(config.env, logger));
    return {
      module: ApprovalServiceModule,
      imports: [
        ServiceConfigModule.forRoot(config, logger),
        // Global, so every feature's stores reach Redis and its producers the queues; global modules close last, so
        // the connections outlive every feature's shutdown.
        { ...QueueModule.forRoot(approvalServiceQueues(config, logger)), global: true },
        CoreModule,
        AuthModule,
        IntakeModule,
        NotificationsModule,
        StandingRulesModule,
        TimersModule,
        ExternalModule,
        ChannelsModule,
        AuditModule,
        HealthModule,
      ],
      // With METRICS_PORT, /metrics is served on that port only (bootstrap), not here.
      controllers: config.env.METRICS_PORT === undefined ? [MetricsController] : [],
      providers: [
        // Every route names its caller (PrincipalGuard), by bearer credential or inbox session (ApproverAuth).
        // Decisions and sign-ins are rate-limited per source address before it, and per principal after it.
        { provide: REQUEST_AUTHENTICATOR, useExisting: ApproverAuth },
        ...rateLimits.before,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        ...rateLimits.after,
        {
          provide: RATE_LIMIT_STORAGE,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => redisRateLimitStorage(redis.commands),
        },
        provideJobCatalog(approvalServiceJobs, [
          ApprovalRequestProcessor,
          NotificationProcessor,
          ExternalWebhooks,
        ]),
      ],
    };
  }
}

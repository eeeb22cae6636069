// Wires the approval service. The validated config and the logger come in from bootstrap, so nothing here reads the environment.
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  Authenticator,
  METRICS_REGISTRY,
  MetricsController,
  PrincipalGuard,
  REQUEST_AUTHENTICATOR,
  DecidedCallResults,
  RunReaders,
  ToolCatalog,
  type Logger,
} from '@countersign/platform';
import { ApprovalStore } from './approvals/approval-store';
import { ApprovalsController } from './approvals/approvals.controller';
import { ApprovalsService } from './approvals/approvals.service';
import { DecisionPublisher } from './approvals/decision-publisher';
import { StandingRuleStore } from './approvals/standing-rule-store';
import { AuditController } from './audit/audit.controller';
import { ApproverAuth } from './auth/approver-auth';
import { ApproverDirectory } from './auth/approver-directory';
import { SignInCodes } from './auth/sign-in-codes';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from './config/approval-service.config';
import { AuditTrail } from './core/audit-trail';
import { Metrics } from './core/metrics';
import { Queues } from './core/queues';
import { RedisConnections } from './core/redis-connections';
import { ServiceAddress } from './core/service-address';
import { LOGGER } from './core/tokens';
import { EmailLinkController } from './email/email-link.controller';
import { EmailNotifier } from './email/email-notifier';
import { HealthController } from './health/health.controller';
import { InboxController } from './inbox/inbox.controller';
import { LiveUpdates } from './live/live-updates';
import { NotificationScheduler } from './notifications/notification-scheduler';
import { NotificationService } from './notifications/notification.service';
import { ApprovalRequestProcessor } from './queues/approval-request.processor';
import { NotificationProcessor } from './queues/notification.processor';
import { QueueWorkers } from './queues/queue-workers';
import { SlackController } from './slack/slack.controller';
import { StandingRulesController } from './standing-rules/standing-rules.controller';
import { StandingRulesService } from './standing-rules/standing-rules.service';
import { SlackNotifier } from './slack/slack-notifier';
import { DueTimers } from './timers/due-timers';
import { TimerSweep } from './timers/timer-sweep';

@Module({})
export class ApprovalServiceModule {
  static register(config: ApprovalServiceConfig, logger: Logger): DynamicModule {
    return {
      module: ApprovalServiceModule,
      controllers: [
        ApprovalsController,
        SlackController,
        EmailLinkController,
        InboxController,
        StandingRulesController,
        AuditController,
        HealthController,
        // With METRICS_PORT, /metrics is served on that port only (bootstrap), not here.
        ...(config.env.METRICS_PORT === undefined ? [MetricsController] : []),
      ],
      providers: [
        { provide: APPROVAL_SERVICE_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        // Every route names its caller (PrincipalGuard), by bearer credential or inbox session (ApproverAuth).
        { provide: Authenticator, useValue: new Authenticator(config.principals) },
        { provide: REQUEST_AUTHENTICATOR, useExisting: ApproverAuth },
        { provide: APP_GUARD, useClass: PrincipalGuard },
        { provide: METRICS_REGISTRY, useFactory: (m: Metrics) => m.registry, inject: [Metrics] },
        {
          provide: RunReaders,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => new RunReaders(redis.commands, config.env.KEY_PREFIX),
        },
        {
          provide: ApprovalStore,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) =>
            new ApprovalStore(
              redis.commands,
              config.env.KEY_PREFIX,
              config.env.APPROVAL_RETENTION,
              config.env.TIMER_LEASE_MS,
            ),
        },
        {
          provide: StandingRuleStore,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) =>
            new StandingRuleStore(
              redis.commands,
              config.env.KEY_PREFIX,
              config.env.APPROVAL_RETENTION,
              config.env.TIMER_LEASE_MS,
            ),
        },
        {
          provide: ToolCatalog,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => new ToolCatalog(redis.commands, config.env.KEY_PREFIX),
        },
        {
          provide: DecidedCallResults,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) =>
            new DecidedCallResults(redis.commands, config.env.KEY_PREFIX),
        },
        StandingRulesService,
        RedisConnections,
        Queues,
        Metrics,
        AuditTrail,
        ServiceAddress,
        ApproverDirectory,
        ApproverAuth,
        SignInCodes,
        LiveUpdates,
        DecisionPublisher,
        NotificationScheduler,
        ApprovalsService,
        SlackNotifier,
        EmailNotifier,
        NotificationService,
        ApprovalRequestProcessor,
        NotificationProcessor,
        QueueWorkers,
        {
          provide: DueTimers,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => new DueTimers(redis.commands, config.env.KEY_PREFIX),
        },
        TimerSweep,
      ],
    };
  }
}

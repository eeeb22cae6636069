// Wires the approval service. The validated config and the logger come in from bootstrap, so nothing here reads the environment.
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  Authenticator,
  METRICS_REGISTRY,
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
import { DecidedCallResults, RunReaders, ToolCatalog } from '@countersign/shared-records';
import { approvalKeys } from './approvals/approval-keys';
import { ApprovalStore } from './approvals/approval-store';
import { ApprovalsController } from './approvals/approvals.controller';
import { ApprovalsService } from './approvals/approvals.service';
import { DecisionPublisher } from './approvals/decision-publisher';
import { ShardLayout } from './approvals/shard-layout';
import { StandingRuleStore } from './approvals/standing-rule-store';
import { AuditController } from './audit/audit.controller';
import { AuditVisibility } from './audit/audit-visibility';
import { ApproverAuth } from './auth/approver-auth';
import { ApproverDirectory } from './auth/approver-directory';
import { SignInCodes } from './auth/sign-in-codes';
import { UnauthenticatedRequests } from './auth/unauthenticated-requests';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from './config/approval-service.config';
import { approvalRateLimits } from './config/rate-limits';
import { AuditTrail } from './core/audit-trail';
import { Metrics } from './core/metrics';
import { ServiceAddress } from './core/service-address';
import { APPROVAL_KEYS, LOGGER } from './core/tokens';
import { EmailLinkController } from './email/email-link.controller';
import { EmailNotifier } from './email/email-notifier';
import { ExternalApprovalsController } from './external/external-approvals.controller';
import { ExternalApprovalsService } from './external/external-approvals.service';
import { ExternalCallStore } from './external/external-call-store';
import { ExternalWebhooks } from './external/external-webhooks';
import { HealthController } from './health/health.controller';
import { InboxController } from './inbox/inbox.controller';
import { LiveUpdates } from './live/live-updates';
import { DigestStore } from './notifications/digest-store';
import { NotificationScheduler } from './notifications/notification-scheduler';
import { NotificationService } from './notifications/notification.service';
import { ApprovalRequestProcessor } from './queues/approval-request.processor';
import { approvalServiceJobs, approvalServiceQueues } from './queues/approval-service-jobs';
import { NotificationProcessor } from './queues/notification.processor';
import { SlackController } from './slack/slack.controller';
import { StandingRulesController } from './standing-rules/standing-rules.controller';
import { StandingRulesService } from './standing-rules/standing-rules.service';
import { SlackNotifier } from './slack/slack-notifier';
import { DueTimers } from './timers/due-timers';
import { TimerSweep } from './timers/timer-sweep';

@Module({})
export class ApprovalServiceModule {
  static register(config: ApprovalServiceConfig, logger: Logger): DynamicModule {
    const rateLimits = rateLimitGuards(approvalRateLimits(config.env, logger));
    const keys = approvalKeys(config.env.KEY_PREFIX, config.env.APPROVAL_SHARDS);
    return {
      module: ApprovalServiceModule,
      imports: [QueueModule.forRoot(approvalServiceQueues(config, logger))],
      controllers: [
        ApprovalsController,
        ExternalApprovalsController,
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
        { provide: APPROVAL_KEYS, useValue: keys },
        ShardLayout,
        { provide: LOGGER, useValue: logger },
        // Every route names its caller (PrincipalGuard), by bearer credential or inbox session (ApproverAuth).
        // Decisions and sign-ins are rate-limited per source address before it, and per principal after it.
        { provide: Authenticator, useValue: new Authenticator(config.principals) },
        { provide: REQUEST_AUTHENTICATOR, useExisting: ApproverAuth },
        ...rateLimits.before,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        ...rateLimits.after,
        {
          provide: RATE_LIMIT_STORAGE,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => redisRateLimitStorage(redis.commands),
        },
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
            new ApprovalStore(redis.commands, keys, config.env.APPROVAL_RETENTION, config.env.TIMER_LEASE_MS),
        },
        {
          provide: StandingRuleStore,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) =>
            new StandingRuleStore(
              redis.commands,
              keys,
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
        {
          provide: ExternalCallStore,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => new ExternalCallStore(redis.commands, keys),
        },
        ExternalWebhooks,
        ExternalApprovalsService,
        Metrics,
        AuditTrail,
        ServiceAddress,
        ApproverDirectory,
        ApproverAuth,
        SignInCodes,
        UnauthenticatedRequests,
        AuditVisibility,
        LiveUpdates,
        DecisionPublisher,
        NotificationScheduler,
        ApprovalsService,
        SlackNotifier,
        EmailNotifier,
        NotificationService,
        ApprovalRequestProcessor,
        NotificationProcessor,
        provideJobCatalog(approvalServiceJobs, [ApprovalRequestProcessor, NotificationProcessor]),
        {
          provide: DueTimers,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) => new DueTimers(redis.commands, keys),
        },
        TimerSweep,
        {
          provide: DigestStore,
          inject: [RedisConnections],
          useFactory: (redis: RedisConnections) =>
            new DigestStore(
              redis.commands,
              keys,
              config.env.NOTIFY_DIGEST_WINDOW,
              config.env.NOTIFY_DIGEST_AFTER,
            ),
        },
      ],
    };
  }
}

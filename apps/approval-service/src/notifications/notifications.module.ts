// Telling approvers: which Slack posts and emails a request, an escalation, an edit or an outcome calls for
// (NotificationScheduler), the jobs that make them once each (NotificationService, through the delivery ledger),
// the digest that holds a flood back, and the Slack and SMTP clients they go through.
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import { AuthModule } from '../auth/auth.module';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { RequestsModule } from '../requests/requests.module';
import { DeliveryLedger } from './delivery-ledger';
import { DigestStore } from './digest-store';
import { EmailNotifier } from './email/email-notifier';
import { NotificationScheduler } from './notification-scheduler';
import { NotificationService } from './notification.service';
import { NotificationProcessor } from './notification.processor';
import { SlackNotifier } from './slack/slack-notifier';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule],
  providers: [
    {
      provide: DeliveryLedger,
      inject: [RedisConnections, APPROVAL_KEYS],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys) => new DeliveryLedger(redis.commands, keys),
    },
    {
      provide: DigestStore,
      inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
        new DigestStore(redis.commands, keys, env.NOTIFY_DIGEST_WINDOW, env.NOTIFY_DIGEST_AFTER),
    },
    SlackNotifier,
    EmailNotifier,
    NotificationScheduler,
    NotificationService,
    NotificationProcessor,
  ],
  exports: [NotificationScheduler, NotificationService, NotificationProcessor, SlackNotifier],
})
export class NotificationsModule {}

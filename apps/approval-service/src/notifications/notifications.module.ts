// Telling approvers: which Slack posts and emails a request, an escalation, an edit or an outcome calls for
// (NotificationScheduler), the jobs that make them once each (NotificationService, through the delivery ledger),
// the digest that holds a flood back, and the Slack and SMTP clients they go through.
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { provideStore } from '../core/store-provider';
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
    provideStore(DeliveryLedger),
    provideStore(
      DigestStore,
      (redis, keys, env) => new DigestStore(redis, keys, env.NOTIFY_DIGEST_WINDOW, env.NOTIFY_DIGEST_AFTER),
    ),
    SlackNotifier,
    EmailNotifier,
    NotificationScheduler,
    NotificationService,
    NotificationProcessor,
  ],
  exports: [NotificationScheduler, NotificationService, NotificationProcessor, SlackNotifier],
})
export class NotificationsModule {}

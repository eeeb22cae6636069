// Where approvers act: the REST API (and the CLI through it), the web inbox, Slack's interactions and the email link.
// Every channel reads requests through the read model and votes through the votes service; none of them touches a
// store.
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { provideStore } from '../core/store-provider';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { StandingRulesModule } from '../standing-rules/standing-rules.module';
import { VotesModule } from '../votes/votes.module';
import { ApprovalsController } from './api/approvals.controller';
import { EmailLinkController } from './email/email-link.controller';
import { InboxController } from './inbox/inbox.controller';
import { InboxSignInController } from './inbox/sign-in.controller';
import { SlackReplays } from './slack/slack-replays';
import { SlackController } from './slack/slack.controller';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule, VotesModule, StandingRulesModule, NotificationsModule],
  controllers: [
    ApprovalsController,
    SlackController,
    EmailLinkController,
    InboxController,
    InboxSignInController,
  ],
  providers: [provideStore(SlackReplays)],
})
export class ChannelsModule {}

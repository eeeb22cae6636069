// Votes: who may decide (deciders.ts), the check of a vote against the revision it was cast on (vote-check.ts), and
// the votes service every channel's vote and every manual step marked done go through.
import { Module } from '@nestjs/common';
import { CoreModule } from '../core/core.module';
import { provideSettlingStore } from '../core/store-provider';
import { DecisionsModule } from '../decisions/decisions.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { VoteCheck } from './vote-check';
import { VoteStore } from './vote-store';
import { VotesService } from './votes.service';

@Module({
  imports: [CoreModule, RequestsModule, DecisionsModule, NotificationsModule],
  providers: [provideSettlingStore(VoteStore), VoteCheck, VotesService],
  exports: [VotesService],
})
export class VotesModule {}

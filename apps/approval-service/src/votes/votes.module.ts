// Votes: who may decide (deciders.ts), the check of a vote against the revision it was cast on (vote-check.ts), and
// the votes service every channel's vote and every manual step marked done go through.
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { DecisionsModule } from '../decisions/decisions.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { VoteCheck } from './vote-check';
import { VoteStore } from './vote-store';
import { VotesService } from './votes.service';

@Module({
  imports: [CoreModule, RequestsModule, DecisionsModule, NotificationsModule],
  providers: [
    {
      provide: VoteStore,
      inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
        new VoteStore(redis.commands, keys, env.APPROVAL_RETENTION, env.TIMER_LEASE_MS),
    },
    VoteCheck,
    VotesService,
  ],
  exports: [VotesService],
})
export class VotesModule {}

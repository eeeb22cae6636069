// Settling requests: signing and publishing decisions (and manual steps marked done), marking them published, and
// counting the requester's trust in a tool.
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { DecisionPublisher } from './decision-publisher';
import { DecisionStore } from './decision-store';
import { Settlement } from './settlement';

@Module({
  imports: [CoreModule, RequestsModule, NotificationsModule],
  providers: [
    {
      provide: DecisionStore,
      inject: [RedisConnections, APPROVAL_KEYS],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys) => new DecisionStore(redis.commands, keys),
    },
    DecisionPublisher,
    Settlement,
  ],
  exports: [Settlement, DecisionPublisher],
})
export class DecisionsModule {}

// Settling requests: signing and publishing decisions (and manual steps marked done), marking them published, and
// counting the requester's trust in a tool.
import { Module } from '@nestjs/common';
import { CoreModule } from '../core/core.module';
import { provideStore } from '../core/store-provider';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { DecisionPublisher } from './decision-publisher';
import { DecisionStore } from './decision-store';
import { Settlement } from './settlement';

@Module({
  imports: [CoreModule, RequestsModule, NotificationsModule],
  providers: [provideStore(DecisionStore), DecisionPublisher, Settlement],
  exports: [Settlement, DecisionPublisher],
})
export class DecisionsModule {}

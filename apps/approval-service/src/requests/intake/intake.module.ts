// Intake: approval requests taken off their queue (and from the approvals API), routed, and handed on to a standing
// rule, to people (stored and notified) or to an immediate denial. Above the features it hands requests to.
import { Module } from '@nestjs/common';
import { CoreModule } from '../../core/core.module';
import { DecisionsModule } from '../../decisions/decisions.module';
import { NotificationsModule } from '../../notifications/notifications.module';
import { StandingRulesModule } from '../../standing-rules/standing-rules.module';
import { RequestsModule } from '../requests.module';
import { ApprovalRequestProcessor } from './approval-request.processor';
import { RequestIntake } from './request-intake';

@Module({
  imports: [CoreModule, RequestsModule, DecisionsModule, StandingRulesModule, NotificationsModule],
  providers: [RequestIntake, ApprovalRequestProcessor],
  exports: [RequestIntake, ApprovalRequestProcessor],
})
export class IntakeModule {}

// Standing rules: written and revoked by rule-writers (the REST routes, which the inbox and the CLI use), stored in
// every shard of the approval state, and deciding the requests they cover as they come in (RuleDecider).
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import { AuthModule } from '../auth/auth.module';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { DecisionsModule } from '../decisions/decisions.module';
import { RequestsModule } from '../requests/requests.module';
import { RuleDecider } from './rule-decider';
import { StandingRuleStore } from './standing-rule-store';
import { StandingRulesController } from './standing-rules.controller';
import { StandingRulesService } from './standing-rules.service';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule, DecisionsModule],
  controllers: [StandingRulesController],
  providers: [
    {
      provide: StandingRuleStore,
      inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
        new StandingRuleStore(redis.commands, keys, env.APPROVAL_RETENTION, env.TIMER_LEASE_MS),
    },
    StandingRulesService,
    RuleDecider,
  ],
  exports: [StandingRulesService, RuleDecider],
})
export class StandingRulesModule {}

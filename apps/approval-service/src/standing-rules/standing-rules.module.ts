// Standing rules: written and revoked by rule-writers (the REST routes, which the inbox and the CLI use), stored in
// every shard of the approval state, and deciding the requests they cover as they come in (RuleDecider).
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { provideSettlingStore } from '../core/store-provider';
import { DecisionsModule } from '../decisions/decisions.module';
import { RequestsModule } from '../requests/requests.module';
import { RuleDecider } from './rule-decider';
import { StandingRuleStore } from './standing-rule-store';
import { StandingRulesController } from './standing-rules.controller';
import { StandingRulesService } from './standing-rules.service';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule, DecisionsModule],
  controllers: [StandingRulesController],
  providers: [provideSettlingStore(StandingRuleStore), StandingRulesService, RuleDecider],
  exports: [StandingRulesService, RuleDecider],
})
export class StandingRulesModule {}

// The approvals API for agents Countersign does not run: a call submitted there is taken in like the worker's (intake),
// decided by people, then claimed once and completed once by its client on the call ledger, and announced by webhook.
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { provideStore } from '../core/store-provider';
import { IntakeModule } from '../requests/intake/intake.module';
import { RequestsModule } from '../requests/requests.module';
import { ExternalAdmission } from './external-admission';
import { ExternalApprovalsController } from './external-approvals.controller';
import { ExternalApprovalsService } from './external-approvals.service';
import { ExternalCallStore } from './external-call-store';
import { ExternalWebhooks } from './external-webhooks';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule, IntakeModule],
  controllers: [ExternalApprovalsController],
  providers: [provideStore(ExternalCallStore), ExternalWebhooks, ExternalAdmission, ExternalApprovalsService],
  exports: [ExternalWebhooks],
})
export class ExternalModule {}

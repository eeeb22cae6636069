// The audit log as this service serves it: GET /audit (each caller sees what was routed to them) and /audit/verify.
// The trail every feature appends to is the core module's (AuditTrail).
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { RequestsModule } from '../requests/requests.module';
import { AuditController } from './audit.controller';
import { AuditVisibility } from './audit-visibility';

@Module({
  imports: [CoreModule, AuthModule, RequestsModule],
  controllers: [AuditController],
  providers: [AuditVisibility],
})
export class AuditModule {}

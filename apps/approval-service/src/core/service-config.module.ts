// The validated configuration and the logger, as bootstrap made them: the one global module, so every feature module
// injects them without importing a module that carries them. It holds values only (no start or stop hooks).
import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { LOGGER } from './tokens';

@Module({})
export class ServiceConfigModule {
  static forRoot(config: ApprovalServiceConfig, logger: Logger): DynamicModule {
    const providers = [
      { provide: APPROVAL_SERVICE_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
    ];
    return { module: ServiceConfigModule, global: true, providers, exports: providers };
  }
}

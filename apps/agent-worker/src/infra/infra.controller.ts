import { Controller, Get, Inject } from '@nestjs/common';
import { InfraStore, type InfraView } from './infra-store';

@Controller('demo')
export class InfraController {
  constructor(@Inject(InfraStore) private readonly infra: InfraStore) {}

  /** The simulated infrastructure: restart counts are real executions of approved calls. */
  @Get('infra')
  view(): Promise<InfraView> {
    return this.infra.view();
  }
}

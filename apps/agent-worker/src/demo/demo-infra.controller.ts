// GET /demo/infra: the simulated infrastructure the built-in ops tools act on (the demo's; off unless SEED_DEMO_INFRA).
import { Controller, Get, Inject } from '@nestjs/common';
import { InfraStore, type InfraView } from '@countersign/demo-infra';

@Controller('demo')
export class DemoInfraController {
  constructor(@Inject(InfraStore) private readonly infra: InfraStore) {}

  /** The simulated infrastructure: restart counts are real executions of approved calls. */
  @Get('infra')
  view(): Promise<InfraView> {
    return this.infra.view();
  }
}

// The demo's simulated infrastructure, opt-in (SEED_DEMO_INFRA, off by default): seeded before the queue workers start,
// and shown on GET /demo/infra. A deployment has none; the built-in ops tools still act on whatever the store holds.
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { InfraStore } from '@countersign/demo-infra';
import { AgentsModule } from '../agents/agents.module';
import { DemoInfraController } from './demo-infra.controller';

@Module({ imports: [AgentsModule], controllers: [DemoInfraController] })
export class DemoInfraModule implements OnModuleInit {
  constructor(@Inject(InfraStore) private readonly infra: InfraStore) {}

  /** Once per key prefix: a second replica finds it seeded. */
  onModuleInit(): Promise<void> {
    return this.infra.seedDefaults();
  }
}

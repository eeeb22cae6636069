// Liveness with the service's dependencies: Redis, the queues, and the due timers.
import { Module } from '@nestjs/common';
import { TimersModule } from '../timers/timers.module';
import { HealthController } from './health.controller';

@Module({ imports: [TimersModule], controllers: [HealthController] })
export class HealthModule {}

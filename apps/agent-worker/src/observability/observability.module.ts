// What the worker shows of itself: GET /health, and GET /metrics on the main port unless METRICS_PORT serves it apart
// (bootstrap). The metrics themselves (WorkerMetrics) are the core module's: every feature counts into them.
import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsController } from '@countersign/platform';
import type { AgentWorkerEnv } from '../config/worker-config';
import { RunsModule } from '../runs/runs.module';
import { WorkerHealthController } from './worker-health.controller';

@Module({})
export class ObservabilityModule {
  static forRoot(env: AgentWorkerEnv): DynamicModule {
    return {
      module: ObservabilityModule,
      // The health answer counts parked calls without a request (RunsModule's request sweep).
      imports: [RunsModule],
      controllers: [WorkerHealthController, ...(env.METRICS_PORT === undefined ? [MetricsController] : [])],
    };
  }
}

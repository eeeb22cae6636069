// Wires one agent worker instance from the settings bootstrap read and checked: the core module (config, logger,
// metrics, audit log, queues), one module per part of a run's life, and who may call the HTTP routes. Nothing here
// reads the environment, so several instances with different settings can share a process.
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  Authenticator,
  BearerAuthenticator,
  PrincipalGuard,
  provideJobCatalog,
  RATE_LIMIT_STORAGE,
  rateLimitGuards,
  RedisConnections,
  redisRateLimitStorage,
  REQUEST_AUTHENTICATOR,
} from '@countersign/platform';
import { AgentsModule } from './agents/agents.module';
import { workerRateLimits } from './config/worker-rate-limits';
import { WorkerCoreModule, type WorkerSettings } from './core/worker-core.module';
import { DecisionsProcessor, ManualStepsProcessor } from './decisions/decision-processors';
import { SignedDecisionsModule } from './decisions/signed-decisions.module';
import { DemoInfraModule } from './demo/demo-infra.module';
import { ObservabilityModule } from './observability/observability.module';
import { agentWorkerJobs } from './queues/agent-worker-jobs';
import { RunbooksModule } from './runbooks/runbooks.module';
import { RunsModule } from './runs/runs.module';
import { RunsProcessor } from './runs/runs.processor';

@Module({})
export class AgentWorkerModule {
  static forRoot(settings: WorkerSettings): DynamicModule {
    const { config, logger } = settings;
    const rateLimits = rateLimitGuards(workerRateLimits(config.env, logger));
    return {
      module: AgentWorkerModule,
      imports: [
        WorkerCoreModule.forRoot(settings),
        AgentsModule,
        RunsModule,
        SignedDecisionsModule,
        RunbooksModule,
        ObservabilityModule.forRoot(config.env),
        // The simulated infrastructure and GET /demo/infra exist only when asked for.
        ...(config.env.SEED_DEMO_INFRA ? [DemoInfraModule] : []),
      ],
      providers: [
        // Every route names its caller (PrincipalGuard); the requester of a run is that principal. Run starts are
        // rate-limited per source address before it, and per principal after it.
        {
          provide: REQUEST_AUTHENTICATOR,
          useValue: new BearerAuthenticator(new Authenticator(config.principals)),
        },
        ...rateLimits.before,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        ...rateLimits.after,
        {
          provide: RATE_LIMIT_STORAGE,
          useFactory: (c: RedisConnections) => redisRateLimitStorage(c.commands),
          inject: [RedisConnections],
        },
        // The handler of every job on the queues the worker consumes (start-up fails naming a missing one).
        provideJobCatalog(agentWorkerJobs, [RunsProcessor, DecisionsProcessor, ManualStepsProcessor]),
      ],
    };
  }
}

// Wires the agent worker from validated settings. Services are plain classes built by factories
// (testable with plain objects); Nest owns HTTP and the order of start-up and shutdown.
import {
  type BeforeApplicationShutdown,
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnModuleInit,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  Authenticator,
  BearerAuthenticator,
  METRICS_REGISTRY,
  MetricsController,
  PrincipalGuard,
  provideJobCatalog,
  QueueModule,
  RedisConnections,
  RATE_LIMIT_STORAGE,
  rateLimitGuards,
  redisRateLimitStorage,
  REQUEST_AUTHENTICATOR,
  type Logger,
  type PrincipalsConfig,
} from '@countersign/platform';
import { AuditKeyring, AuditLog } from '@countersign/audit';
import { DecidedCallResults, RunReaders, ToolCatalog } from '@countersign/shared-records';
import { ToolProviders } from '@countersign/tool-providers';
import { AgentCatalog } from './agents/agent-catalog';
import type { RunbookLibrary } from './runbooks/runbook-library';
import { RunbooksController } from './runbooks/runbooks.controller';
import { ToolProvidersLifecycle } from './agents/tool-providers.lifecycle';
import type { AgentsConfig } from './config/agents-config.schema';
import { workerRateLimits } from './config/rate-limits';
import type { AgentWorkerConfig } from './config/worker-config';
import { InfraController } from './infra/infra.controller';
import { InfraStore } from './infra/infra-store';
import { HealthController } from './observability/health.controller';
import { WorkerMetrics } from './observability/worker-metrics';
import { agentWorkerJobs, agentWorkerQueues } from './queues/agent-worker-jobs';
import { DecisionsProcessor, ManualStepsProcessor, RunsProcessor } from './queues/processors';
import { ApprovalRequestsProducer, RunsProducer } from './queues/producers';
import { Decisions } from './runs/decisions';
import { RequestSweep } from './runs/request-sweep';
import { RunEvents } from './runs/run-events';
import { RunLoop } from './runs/run-loop';
import { RunCalls } from './runs/run-calls';
import { RunStore } from './runs/run-store';
import { UnpublishedRequests } from './runs/unpublished-requests';
import { RunsController } from './runs/runs.controller';
import { RunsService } from './runs/runs.service';
import { TestFaults } from './runs/test-faults';

export interface AgentWorkerSettings {
  config: AgentWorkerConfig;
  agents: AgentsConfig;
  principals: PrincipalsConfig;
  logger: Logger;
  /** The MCP servers and HTTP tools of AGENTS_CONFIG, built with the service's environment (its secrets). */
  providers: ToolProviders;
  /** The runbooks of RUNBOOKS_DIR, checked at start-up. */
  runbooks: RunbookLibrary;
}

export const SETTINGS = Symbol('AgentWorkerSettings');

/**
 * Infra and events are ready before the queue workers start (QueueModule starts them once every module is
 * initialised); events stop after the workers have finished their in-flight jobs and tool calls (QueueModule
 * closes them on module destroy, and Redis last).
 */
@Injectable()
export class Lifecycle implements OnModuleInit, BeforeApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: AgentWorkerSettings,
    @Inject(InfraStore) private readonly infra: InfraStore,
    @Inject(RunEvents) private readonly events: RunEvents,
    @Inject(AgentCatalog) private readonly agents: AgentCatalog,
    @Inject(RunLoop) private readonly runLoop: RunLoop,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.settings.config.SEED_DEMO_INFRA) await this.infra.seedDefaults();
    // What approvers are shown of each tool, stored before any request can name it.
    await this.runLoop.publishDefinitions(this.agents.registeredTools());
    await this.events.start();
  }

  beforeApplicationShutdown(): void {
    this.events.stop();
  }
}

@Module({})
export class AgentWorkerModule {
  static forRoot(settings: AgentWorkerSettings): DynamicModule {
    const { config, agents, principals, logger, providers, runbooks } = settings;
    const rateLimits = rateLimitGuards(workerRateLimits(config, logger));
    return {
      module: AgentWorkerModule,
      imports: [QueueModule.forRoot(agentWorkerQueues(config, logger))],
      // /demo/infra exists only while the simulated infrastructure does; /metrics moves to its own port when asked.
      controllers: [
        RunsController,
        RunbooksController,
        HealthController,
        ...(config.SEED_DEMO_INFRA ? [InfraController] : []),
        ...(config.METRICS_PORT === undefined ? [MetricsController] : []),
      ],
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: WorkerMetrics, useValue: new WorkerMetrics() },
        { provide: METRICS_REGISTRY, useFactory: (m: WorkerMetrics) => m.registry, inject: [WorkerMetrics] },
        // Every route names its caller (PrincipalGuard); the requester of a run is that principal. Run starts are
        // rate-limited per source address before it, and per principal after it.
        { provide: REQUEST_AUTHENTICATOR, useValue: new BearerAuthenticator(new Authenticator(principals)) },
        ...rateLimits.before,
        { provide: APP_GUARD, useClass: PrincipalGuard },
        ...rateLimits.after,
        {
          provide: RATE_LIMIT_STORAGE,
          useFactory: (c: RedisConnections) => redisRateLimitStorage(c.commands),
          inject: [RedisConnections],
        },
        {
          provide: AuditLog,
          useFactory: (c: RedisConnections) => {
            const keyring = AuditKeyring.fromEnv(config);
            logger.info({ current: keyring.current.id, verifying: keyring.ids }, 'audit signing keys');
            return new AuditLog(c.commands, config.KEY_PREFIX, 'agent-worker', keyring, {
              shards: config.AUDIT_SHARDS,
            });
          },
          inject: [RedisConnections],
        },
        {
          provide: InfraStore,
          useFactory: (c: RedisConnections) => new InfraStore(c.commands, config.KEY_PREFIX),
          inject: [RedisConnections],
        },
        { provide: ToolProviders, useValue: providers },
        ToolProvidersLifecycle,
        {
          provide: AgentCatalog,
          useFactory: (infra: InfraStore) =>
            new AgentCatalog(agents, config, infra, providers, logger, runbooks),
          inject: [InfraStore],
        },
        {
          provide: RunStore,
          useFactory: (c: RedisConnections) =>
            new RunStore(c.commands, config.KEY_PREFIX, config.FINISHED_RUN_TTL_SECONDS),
          inject: [RedisConnections],
        },
        {
          provide: RunEvents,
          useFactory: (c: RedisConnections, store: RunStore) =>
            new RunEvents(store, c.subscriber, config.KEY_PREFIX, logger),
          inject: [RedisConnections, RunStore],
        },
        ApprovalRequestsProducer,
        RunsProducer,
        {
          provide: RunLoop,
          useFactory: (
            ...deps: [
              RunStore,
              AgentCatalog,
              ApprovalRequestsProducer,
              RunEvents,
              AuditLog,
              WorkerMetrics,
              RedisConnections,
            ]
          ) => {
            const [store, catalog, approvals, events, audit, metrics, c] = deps;
            const execution = {
              heartbeatMs: config.EXECUTION_HEARTBEAT_MS,
              staleAfterMs: config.EXECUTION_STALE_MS,
            };
            const tools = new ToolCatalog(c.commands, config.KEY_PREFIX);
            const results = {
              store: new DecidedCallResults(c.commands, config.KEY_PREFIX),
              ttlMs: config.FINISHED_RUN_TTL_SECONDS * 1000,
            };
            const faults = new TestFaults(config.COUNTERSIGN_TEST_FAULTS);
            return new RunLoop({
              store,
              calls: new RunCalls(c.commands, config.KEY_PREFIX),
              unpublished: new UnpublishedRequests(c.commands, config.KEY_PREFIX),
              catalog,
              approvals,
              events,
              audit,
              metrics,
              logger,
              execution,
              faults,
              tools,
              results,
            });
          },
          inject: [
            RunStore,
            AgentCatalog,
            ApprovalRequestsProducer,
            RunEvents,
            AuditLog,
            WorkerMetrics,
            RedisConnections,
          ],
        },
        {
          provide: Decisions,
          useFactory: (store: RunStore, runLoop: RunLoop, audit: AuditLog, metrics: WorkerMetrics) =>
            new Decisions({
              store,
              runLoop,
              audit,
              metrics,
              logger,
              signingSecrets: [
                config.DECISION_SIGNING_SECRET,
                config.DECISION_SIGNING_PREVIOUS_SECRET,
              ].filter((secret): secret is string => secret !== undefined),
            }),
          inject: [RunStore, RunLoop, AuditLog, WorkerMetrics],
        },
        {
          // Starts once the app has booted and stops before the queues close (it publishes on them).
          provide: RequestSweep,
          useFactory: (store: RunStore, runLoop: RunLoop, metrics: WorkerMetrics, c: RedisConnections) =>
            new RequestSweep({
              store,
              unpublished: new UnpublishedRequests(c.commands, config.KEY_PREFIX),
              runLoop,
              metrics,
              logger,
              intervalMs: config.REQUEST_SWEEP_MS,
            }),
          inject: [RunStore, RunLoop, WorkerMetrics, RedisConnections],
        },
        {
          provide: RunsProcessor,
          useFactory: (runLoop: RunLoop) => new RunsProcessor(runLoop, logger),
          inject: [RunLoop],
        },
        {
          provide: DecisionsProcessor,
          useFactory: (decisions: Decisions, runLoop: RunLoop) =>
            new DecisionsProcessor(decisions, runLoop, logger),
          inject: [Decisions, RunLoop],
        },
        {
          provide: ManualStepsProcessor,
          useFactory: (decisions: Decisions) => new ManualStepsProcessor(decisions),
          inject: [Decisions],
        },
        provideJobCatalog(agentWorkerJobs, [RunsProcessor, DecisionsProcessor, ManualStepsProcessor]),
        {
          provide: RunsService,
          useFactory: (
            ...deps: [RunStore, AgentCatalog, RunsProducer, RunEvents, AuditLog, RedisConnections]
          ) => {
            const [store, catalog, producer, events, audit, c] = deps;
            const readers = new RunReaders(c.commands, config.KEY_PREFIX);
            return new RunsService({ store, catalog, producer, events, audit, readers });
          },
          inject: [RunStore, AgentCatalog, RunsProducer, RunEvents, AuditLog, RedisConnections],
        },
        Lifecycle,
      ],
    };
  }
}

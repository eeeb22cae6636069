// Wires the agent worker from validated settings. Services are plain classes built by factories
// (testable with plain objects); Nest owns HTTP and the order of start-up and shutdown.
import {
  type BeforeApplicationShutdown,
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { QueueName } from '@countersign/contracts';
import {
  AuditLog,
  Authenticator,
  BearerAuthenticator,
  METRICS_REGISTRY,
  MetricsController,
  PrincipalGuard,
  REQUEST_AUTHENTICATOR,
  DecidedCallResults,
  RunReaders,
  ToolCatalog,
  type Logger,
  type PrincipalsConfig,
} from '@countersign/platform';
import { AgentCatalog } from './agents/agent-catalog';
import type { AgentsConfig } from './config/agents-config.schema';
import type { AgentWorkerConfig } from './config/worker-config';
import { InfraController } from './infra/infra.controller';
import { InfraStore } from './infra/infra-store';
import { HealthController } from './observability/health.controller';
import { WorkerMetrics } from './observability/worker-metrics';
import { Connections } from './queues/connections';
import { DecisionsProcessor, RunsProcessor } from './queues/processors';
import { ApprovalRequestsProducer, RunsProducer } from './queues/producers';
import { QueueWorkers } from './queues/queue-workers';
import { Decisions } from './runs/decisions';
import { RunEvents } from './runs/run-events';
import { RunLoop } from './runs/run-loop';
import { RunStore } from './runs/run-store';
import { RunsController } from './runs/runs.controller';
import { RunsService } from './runs/runs.service';

export interface AgentWorkerSettings {
  config: AgentWorkerConfig;
  agents: AgentsConfig;
  principals: PrincipalsConfig;
  logger: Logger;
}

export const SETTINGS = Symbol('AgentWorkerSettings');

/** Start-up and shutdown order: events and infra first, workers last; workers drain before Redis closes. */
@Injectable()
export class Lifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: AgentWorkerSettings,
    @Inject(Connections) private readonly connections: Connections,
    @Inject(InfraStore) private readonly infra: InfraStore,
    @Inject(RunEvents) private readonly events: RunEvents,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
    @Inject(RunsProcessor) private readonly runs: RunsProcessor,
    @Inject(DecisionsProcessor) private readonly decisions: DecisionsProcessor,
    @Inject(AgentCatalog) private readonly agents: AgentCatalog,
    @Inject(RunLoop) private readonly runLoop: RunLoop,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.settings.config.SEED_DEMO_INFRA) await this.infra.seedDefaults();
    // What approvers are shown of each tool, stored before any request can name it.
    await this.runLoop.publishDefinitions(this.agents.registeredTools());
    await this.events.start();
    this.workers.start({
      [QueueName.AgentRuns]: this.runs,
      [QueueName.ApprovalDecisions]: this.decisions,
    });
  }

  /** Finishes in-flight jobs (and so in-flight tool calls) before anything closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.workers.close();
    this.events.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connections.close();
  }
}

@Module({})
export class AgentWorkerModule {
  static forRoot(settings: AgentWorkerSettings): DynamicModule {
    const { config, agents, principals, logger } = settings;
    return {
      module: AgentWorkerModule,
      // /demo/infra exists only while the simulated infrastructure does; /metrics moves to its own port when asked.
      controllers: [
        RunsController,
        HealthController,
        ...(config.SEED_DEMO_INFRA ? [InfraController] : []),
        ...(config.METRICS_PORT === undefined ? [MetricsController] : []),
      ],
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: WorkerMetrics, useValue: new WorkerMetrics() },
        { provide: METRICS_REGISTRY, useFactory: (m: WorkerMetrics) => m.registry, inject: [WorkerMetrics] },
        // Every route names its caller (PrincipalGuard); the requester of a run is that principal.
        { provide: REQUEST_AUTHENTICATOR, useValue: new BearerAuthenticator(new Authenticator(principals)) },
        { provide: APP_GUARD, useClass: PrincipalGuard },
        { provide: Connections, useFactory: () => new Connections(config, logger) },
        {
          provide: AuditLog,
          useFactory: (c: Connections) => new AuditLog(c.commands, config.KEY_PREFIX, 'agent-worker'),
          inject: [Connections],
        },
        {
          provide: InfraStore,
          useFactory: (c: Connections) => new InfraStore(c.commands, config.KEY_PREFIX),
          inject: [Connections],
        },
        {
          provide: AgentCatalog,
          useFactory: (infra: InfraStore) => new AgentCatalog(agents, config, infra),
          inject: [InfraStore],
        },
        {
          provide: RunStore,
          useFactory: (c: Connections) =>
            new RunStore(c.commands, config.KEY_PREFIX, config.FINISHED_RUN_TTL_SECONDS),
          inject: [Connections],
        },
        {
          provide: RunEvents,
          useFactory: (c: Connections, store: RunStore) =>
            new RunEvents(store, c.subscriber, config.KEY_PREFIX, logger),
          inject: [Connections, RunStore],
        },
        {
          provide: ApprovalRequestsProducer,
          useFactory: (c: Connections) => new ApprovalRequestsProducer(c.queues[QueueName.ApprovalRequests]),
          inject: [Connections],
        },
        {
          provide: RunsProducer,
          useFactory: (c: Connections) => new RunsProducer(c.queues[QueueName.AgentRuns]),
          inject: [Connections],
        },
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
              Connections,
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
            return new RunLoop({
              store,
              catalog,
              approvals,
              events,
              audit,
              metrics,
              logger,
              execution,
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
            Connections,
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
          provide: QueueWorkers,
          useFactory: (c: Connections) => new QueueWorkers(config, c, logger),
          inject: [Connections],
        },
        {
          provide: RunsService,
          useFactory: (...deps: [RunStore, AgentCatalog, RunsProducer, RunEvents, AuditLog, Connections]) => {
            const [store, catalog, producer, events, audit, c] = deps;
            const readers = new RunReaders(c.commands, config.KEY_PREFIX);
            return new RunsService({ store, catalog, producer, events, audit, readers });
          },
          inject: [RunStore, AgentCatalog, RunsProducer, RunEvents, AuditLog, Connections],
        },
        Lifecycle,
      ],
    };
  }
}

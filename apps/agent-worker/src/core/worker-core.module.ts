// What every feature module of one worker instance uses, given by bootstrap or built once for the instance: the
// validated config, the runbooks, the logger, the run hooks, the tool providers, the metrics, the audit log, and the
// queue layer (Redis connections, queues, workers). Global, so feature modules name what they inject and nothing more.
import {
  type DynamicModule,
  type FactoryProvider,
  Global,
  type InjectionToken,
  Module,
} from '@nestjs/common';
import { AuditKeyring, AuditLog } from '@countersign/audit';
import { METRICS_REGISTRY, QueueModule, RedisConnections, type Logger } from '@countersign/platform';
import { ToolProviders } from '@countersign/tool-providers';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { RunbookLibrary } from '../runbooks/runbook-library';
import { NO_RUN_HOOKS, RUN_HOOKS, type RunHooks } from '../runs/run-hooks';
import { WORKER_LOGGER } from './worker-logger';
import { WorkerMetrics } from './worker-metrics';
import { agentWorkerQueues } from './worker-queues';

/** What bootstrap hands the app: everything it read and checked before anything connects. */
export interface WorkerSettings {
  config: WorkerConfig;
  /** The runbooks of RUNBOOKS_DIR, checked at start-up (none without one). */
  runbooks: RunbookLibrary;
  logger: Logger;
  /** The MCP servers and HTTP tools of AGENTS_CONFIG, built with the service's environment (its secrets). */
  providers: ToolProviders;
  /** Points of a run's life an embedder looks in at; none unless given (see RunHooks). */
  runHooks?: RunHooks;
}

/**
 * A provider of an I/O adapter (a store over Redis, the audit log): plain classes, built here from the instance's
 * command connection and config, so a test builds one with a Redis client and a key prefix. Every other class of
 * the worker is an @Injectable() with constructor injection.
 */
export function fromRedis<T>(
  token: InjectionToken,
  build: (redis: RedisConnections['commands'], config: WorkerConfig, logger: Logger) => T,
): FactoryProvider<T> {
  return {
    provide: token,
    useFactory: (connections: RedisConnections, config: WorkerConfig, logger: Logger) =>
      build(connections.commands, config, logger),
    inject: [RedisConnections, WORKER_CONFIG, WORKER_LOGGER],
  };
}

@Global()
@Module({})
export class WorkerCoreModule {
  static forRoot({ config, runbooks, logger, providers, runHooks }: WorkerSettings): DynamicModule {
    const queues = QueueModule.forRoot(agentWorkerQueues(config.env, logger));
    const given = [
      { provide: WORKER_CONFIG, useValue: config },
      { provide: RunbookLibrary, useValue: runbooks },
      { provide: WORKER_LOGGER, useValue: logger },
      { provide: RUN_HOOKS, useValue: runHooks ?? NO_RUN_HOOKS },
      { provide: ToolProviders, useValue: providers },
    ];
    const built = [
      WorkerMetrics,
      { provide: METRICS_REGISTRY, useFactory: (m: WorkerMetrics) => m.registry, inject: [WorkerMetrics] },
      fromRedis(AuditLog, (redis, { env }, log) => {
        const keyring = AuditKeyring.fromEnv(env);
        log.info({ current: keyring.current.id, verifying: keyring.ids }, 'audit signing keys');
        return new AuditLog(redis, env.KEY_PREFIX, 'agent-worker', keyring, { shards: env.AUDIT_SHARDS });
      }),
    ];
    return {
      module: WorkerCoreModule,
      imports: [queues],
      providers: [...given, ...built],
      exports: [...given.map((p) => p.provide), WorkerMetrics, METRICS_REGISTRY, AuditLog, queues],
    };
  }
}

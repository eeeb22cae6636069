// The queue layer of both apps, on @nestjs/bullmq: the app instance's Redis connections, its queues
// (BullModule.forRootAsync and registerQueueAsync, injectable with @InjectQueue), the workers of its job catalog,
// and the order in which all of it starts and stops.
import {
  type DynamicModule,
  Inject,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import type { QueueName } from '@countersign/contracts';
import { JOB_CATALOG } from './job-catalog';
import { QUEUE_MODULE_OPTIONS, type JobRetry, type QueueModuleOptions } from './queue-options';
import { QueueWorkers } from './queue-workers';
import { queueShardPrefixes } from './queue-shards';
import { QUEUE_EVENTS_MAX_LEN } from './retention';
import { Queues } from './queues';
import { RedisConnections } from './redis-connections';

/** Holds the options and the connections, so that BullModule's factories can inject them. */
@Module({})
class QueueConnectionsModule {}

@Module({})
export class QueueModule
  implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  constructor(
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
    @Inject(QueueWorkers) private readonly workers: QueueWorkers,
    @Inject(Queues) private readonly queues: Queues,
    @Inject(RedisConnections) private readonly connections: RedisConnections,
  ) {}

  /**
   * Everything is built from `options`, which the app computes from its validated config at bootstrap, so
   * instances with different settings can share a process. The app provides its handlers with provideJobCatalog().
   */
  static forRoot<Consumed extends QueueName>(options: QueueModuleOptions<Consumed>): DynamicModule {
    const settings = { provide: QUEUE_MODULE_OPTIONS, useValue: options };
    const connections = {
      provide: RedisConnections,
      useFactory: ({ env, service, logger }: QueueModuleOptions) =>
        new RedisConnections({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES }, service, logger),
      inject: [QUEUE_MODULE_OPTIONS],
    };
    const connectionsModule: DynamicModule = {
      module: QueueConnectionsModule,
      providers: [settings, connections],
      exports: [settings, connections],
    };
    const produced = Object.keys(options.produces) as QueueName[];
    const bullRoot = BullModule.forRootAsync({
      imports: [connectionsModule],
      inject: [RedisConnections, QUEUE_MODULE_OPTIONS],
      // Shard 0's prefix: the configured one unless QUEUE_SHARDS > 1.
      useFactory: (redis: RedisConnections, { env }: QueueModuleOptions) => ({
        connection: redis.producers,
        prefix: shardPrefixes(env)[0],
      }),
      // Workers are QueueWorkers' (see there why); no @Processor class is looked for.
      extraOptions: { manualRegistration: true },
    });
    const bullQueues = BullModule.registerQueueAsync(
      ...produced.map((name) => ({
        name,
        imports: [connectionsModule],
        inject: [QUEUE_MODULE_OPTIONS],
        useFactory: ({ produces }: QueueModuleOptions) => queueOptions(produces[name]!),
      })),
    );
    return {
      module: QueueModule,
      imports: [connectionsModule, bullRoot, bullQueues],
      providers: [
        {
          provide: Queues,
          // Shard 0 of each queue is @nestjs/bullmq's; the other shards are built here, alike but for the prefix.
          useFactory: (redis: RedisConnections, ...registered: Queue[]) => {
            const others = shardPrefixes(options.env).slice(1);
            const shards = produced.map((name, i) => {
              const copies = others.map(
                (prefix) =>
                  new Queue(name, {
                    connection: redis.producers,
                    prefix,
                    ...queueOptions(options.produces[name]!),
                  }),
              );
              return [name, [registered[i]!, ...copies]] as const;
            });
            return new Queues(new Map(shards), options.logger);
          },
          inject: [RedisConnections, ...produced.map((name) => getQueueToken(name))],
        },
        {
          provide: QueueWorkers,
          useFactory: (o: QueueModuleOptions, redis: RedisConnections) => new QueueWorkers(o, redis),
          inject: [QUEUE_MODULE_OPTIONS, RedisConnections],
        },
      ],
      exports: [connectionsModule, bullQueues, Queues, QueueWorkers],
    };
  }

  /** Fails start-up, naming what to add, when the app's catalog misses a handler (or is not provided). */
  onModuleInit(): void {
    let catalog: unknown;
    try {
      catalog = this.moduleRef.get(JOB_CATALOG, { strict: false });
    } catch {
      catalog = undefined;
    }
    this.workers.useCatalog(catalog);
  }

  /** Every module is initialised (the app's own start-up included): the workers may take jobs. */
  onApplicationBootstrap(): void {
    this.workers.start();
  }

  /**
   * The first of the queue layer to close: in-flight jobs finish while their queues and connections are open
   * (those close in onApplicationShutdown, after every module's destroy and before-shutdown hooks).
   */
  async onModuleDestroy(): Promise<void> {
    await this.workers.close();
  }

  /** Last: the queues, then the connections under them. */
  async onApplicationShutdown(): Promise<void> {
    await this.queues.close();
    await this.connections.close();
  }
}

/** Every queue shard's prefix, shard 0 first. */
function shardPrefixes(env: QueueModuleOptions['env']): string[] {
  return queueShardPrefixes(env.QUEUE_PREFIX, env.QUEUE_SHARDS ?? 1);
}

/**
 * Every copy of a produced queue: only what every job must carry (BullMQ stores a job's options in its hash;
 * retention is the consuming workers' option), and the events cap, which each Queue writes to the queue's meta hash
 * when it opens.
 */
function queueOptions(retry: JobRetry) {
  return {
    defaultJobOptions: { attempts: retry.attempts, backoff: { type: 'exponential', delay: retry.backoffMs } },
    streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } },
  };
}

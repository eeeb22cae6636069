// A run's life in the worker: started through POST /runs (the agent-runs queue), advanced turn by turn, parked on the
// calls that wait for a decision, resumed, ended; its state in one Redis hash (RunStore, RunCalls on the call ledger),
// its events to followers (RunEvents, SSE), and the sweep that publishes requests a dead job left unpublished.
import { Module } from '@nestjs/common';
import { RedisConnections, type Logger } from '@countersign/platform';
import { DecidedCallResults, RunReaders } from '@countersign/shared-records';
import { AgentsModule } from '../agents/agents.module';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { fromRedis } from '../core/worker-core.module';
import { WORKER_LOGGER } from '../core/worker-logger';
import { CallExecution } from './call-execution';
import { DeniedCalls } from './denied-calls';
import { FrontierSettlement } from './frontier-settlement';
import { RequestSweep } from './request-sweep';
import { RunCalls } from './run-calls';
import { RunEndings } from './run-endings';
import { RunEvents } from './run-events';
import { RunJobGuard } from './run-job-guard';
import { RunLoop } from './run-loop';
import { RunParking } from './run-parking';
import { ApprovalRequestsProducer, RunsProducer } from './run-producers';
import { RunStore } from './run-store';
import { RunsController } from './runs.controller';
import { RunsProcessor } from './runs.processor';
import { RunsService } from './runs.service';
import { StickyDenials } from './sticky-denials';
import { UnpublishedRequests } from './unpublished-requests';

const stores = [
  fromRedis(RunStore, (redis, { env }) => new RunStore(redis, env.KEY_PREFIX, env.FINISHED_RUN_TTL_SECONDS)),
  fromRedis(RunCalls, (redis, { env }) => new RunCalls(redis, env.KEY_PREFIX)),
  fromRedis(DeniedCalls, (redis, { env }) => new DeniedCalls(redis, env.KEY_PREFIX)),
  fromRedis(UnpublishedRequests, (redis, { env }) => new UnpublishedRequests(redis, env.KEY_PREFIX)),
  fromRedis(DecidedCallResults, (redis, { env }) => new DecidedCallResults(redis, env.KEY_PREFIX)),
  fromRedis(RunReaders, (redis, { env }) => new RunReaders(redis, env.KEY_PREFIX)),
  {
    // One subscriber connection per instance; every follower of every run listens through it.
    provide: RunEvents,
    useFactory: (connections: RedisConnections, store: RunStore, config: WorkerConfig, logger: Logger) =>
      new RunEvents(store, connections.subscriber, config.env.KEY_PREFIX, logger),
    inject: [RedisConnections, RunStore, WORKER_CONFIG, WORKER_LOGGER],
  },
];

@Module({
  imports: [AgentsModule],
  providers: [
    ...stores,
    ApprovalRequestsProducer,
    RunsProducer,
    RunEndings,
    RunParking,
    CallExecution,
    StickyDenials,
    FrontierSettlement,
    RunLoop,
    RunJobGuard,
    RunsProcessor,
    RequestSweep,
    RunsService,
  ],
  controllers: [RunsController],
  exports: [RunStore, RunLoop, RunParking, RunJobGuard, RunsProcessor, RequestSweep, RunsService],
})
export class RunsModule {}

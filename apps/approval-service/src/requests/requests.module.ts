// A request as it is stored, routed and read: the request store, routing, the read model the channels read, the live
// change feed, and run access for the approvers it is routed to. Every later feature builds on it; intake, which
// takes requests in, is its own module (intake/), above the features it hands requests to.
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import { AuthModule } from '../auth/auth.module';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { ApprovalReadModel } from './approval-read-model';
import { LiveUpdates } from './live-updates';
import { RequestStore } from './request-store';
import { RequestRouter } from './routing/request-router';
import { RunAccess } from './run-access';

const providers = [
  {
    provide: RequestStore,
    inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
    useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
      new RequestStore(redis.commands, keys, env.APPROVAL_RETENTION, env.TIMER_LEASE_MS),
  },
  ApprovalReadModel,
  LiveUpdates,
  RequestRouter,
  RunAccess,
];

@Module({ imports: [CoreModule, AuthModule], providers, exports: providers })
export class RequestsModule {}

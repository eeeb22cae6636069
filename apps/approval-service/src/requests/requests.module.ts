// A request as it is stored, routed and read: the request store, routing, the read model the channels read (and the
// recent copies a vote is checked on, see recent-requests.ts), the live change feed, and run access for the approvers
// it is routed to. Every later feature builds on it; intake, which
// takes requests in, is its own module (intake/), above the features it hands requests to.
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CoreModule } from '../core/core.module';
import { provideSettlingStore } from '../core/store-provider';
import { ApprovalReadModel } from './approval-read-model';
import { LiveUpdates } from './live-updates';
import { RecentRequests } from './recent-requests';
import { RequestStore } from './request-store';
import { RequestRouter } from './routing/request-router';
import { RunAccess } from './run-access';

const providers = [
  provideSettlingStore(RequestStore),
  ApprovalReadModel,
  LiveUpdates,
  RecentRequests,
  RequestRouter,
  RunAccess,
];

@Module({ imports: [CoreModule, AuthModule], providers, exports: providers })
export class RequestsModule {}

// Who is knocking: the principal directory's approvers and their groups, inbox sessions and sign-in codes, and the
// count of requests no credential vouches for. The guards that use them are the root module's (every route).
import { Module } from '@nestjs/common';
import { Authenticator } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { CoreModule } from '../core/core.module';
import { ApproverAuth } from './approver-auth';
import { ApproverDirectory } from './approver-directory';
import { SignInCodes } from './sign-in-codes';
import { UnauthenticatedRequests } from './unauthenticated-requests';

const providers = [
  {
    provide: Authenticator,
    inject: [APPROVAL_SERVICE_CONFIG],
    useFactory: (config: ApprovalServiceConfig) => new Authenticator(config.principals),
  },
  ApproverDirectory,
  ApproverAuth,
  SignInCodes,
  UnauthenticatedRequests,
];

@Module({ imports: [CoreModule], providers, exports: providers })
export class AuthModule {}

// routeRequest with the service's routing config and default expiry: how intake, an edit's revision, the approvals API
// and the standing rules all route a call, so each asks the same rules the same way.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalRequest } from '@countersign/contracts';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../../config/approval-service.config';
import {
  possibleRoutes,
  routedArgumentPaths,
  routeRequest,
  type CallPattern,
  type Route,
} from './route-request';

@Injectable()
export class RequestRouter {
  constructor(@Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig) {}

  /** The expiry of a request whose rule and defaults name none (APPROVAL_DEFAULT_EXPIRY). */
  get defaultExpiryMs(): number {
    return this.config.env.APPROVAL_DEFAULT_EXPIRY;
  }

  /** The route of a request (or of a revision: the request with its edited arguments); undefined: no route. */
  route(request: ApprovalRequest): Route | undefined {
    return routeRequest(request, this.config.approvals, { expiresInMs: this.defaultExpiryMs });
  }

  /** Every route a call of this pattern could get (see possibleRoutes). */
  possibleRoutes(pattern: CallPattern): Route[] {
    return possibleRoutes(pattern, this.config.approvals, { expiresInMs: this.defaultExpiryMs });
  }

  /** The argument paths some routing rule looks at. */
  routedArgumentPaths(): string[] {
    return routedArgumentPaths(this.config.approvals);
  }
}

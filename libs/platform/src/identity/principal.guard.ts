// Every HTTP route of both services is behind this guard (registered as APP_GUARD): it names the caller or answers 401
// (429 instead when the request is over its address rate limit, counted before this guard).
// A route that authenticates its caller some other way (a Slack signature, a signed email link) or serves no one's
// data (health) says so with @PublicRoute('how'), which the README's Security section lists.
import {
  createParamDecorator,
  ForbiddenException,
  Inject,
  Injectable,
  SetMetadata,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { answerAddressCount } from '../rate-limits/rate-limit.guards';
import { Authenticator, type Authentication } from './authenticator';
import type { Principal, ServiceRole } from './principals.schema';

const PUBLIC_ROUTE = 'countersign:public-route';
const REQUIRED_ROLE = 'countersign:required-role';

/** The route does its own authentication (or needs none); `how` says which, for readers of the code. */
export const PublicRoute = (how: string) => SetMetadata(PUBLIC_ROUTE, how);

/** Besides a credential, the caller must hold this role (403 otherwise). */
export const RequireRole = (role: ServiceRole) => SetMetadata(REQUIRED_ROLE, role);

/** What the guard reads of a request, and where it leaves the principal. */
export interface AuthRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  principal?: Principal;
}

/** How an app names the caller of a request; undefined when the request carries no credential at all. */
export interface RequestAuthenticator {
  authenticate(req: AuthRequest): Promise<Authentication | undefined>;
}
export const REQUEST_AUTHENTICATOR = Symbol('RequestAuthenticator');

/** The plain kind: `Authorization: Bearer <API token or OIDC JWT>`. */
export class BearerAuthenticator implements RequestAuthenticator {
  constructor(private readonly authenticator: Authenticator) {}

  authenticate(req: AuthRequest): Promise<Authentication | undefined> {
    const header = req.headers.authorization;
    return this.authenticator.fromAuthorizationHeader(Array.isArray(header) ? header[0] : header);
  }
}

@Injectable()
export class PrincipalGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(REQUEST_AUTHENTICATOR) private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<string>(PUBLIC_ROUTE, targets) !== undefined) return true;
    try {
      return await this.authenticate(context, targets);
    } catch (error) {
      // A request over its address limit is refused as such (429), whatever its credential: the address count the
      // rate limits started before this guard is answered before a refusal of the credential (rate-limit.guards.ts).
      await answerAddressCount(context);
      if (error instanceof UnauthorizedException)
        context
          .switchToHttp()
          .getResponse<{ setHeader(name: string, value: string): void }>()
          .setHeader('WWW-Authenticate', 'Bearer');
      throw error;
    }
  }

  private async authenticate(
    context: ExecutionContext,
    targets: ReturnType<ExecutionContext['getHandler']>[],
  ): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthRequest>();
    const result = await this.authenticator.authenticate(req);
    if (!result?.ok) {
      throw new UnauthorizedException(
        result
          ? `credential refused: ${result.reason}`
          : 'a credential is required: send "Authorization: Bearer <token>"',
      );
    }
    req.principal = result.principal;
    const role = this.reflector.getAllAndOverride<ServiceRole>(REQUIRED_ROLE, targets);
    if (role && !result.principal.roles.includes(role))
      throw new ForbiddenException(`the "${role}" role is required`);
    return true;
  }
}

/** The authenticated caller of a route behind PrincipalGuard. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const principal = context.switchToHttp().getRequest<AuthRequest>().principal;
    // A public route has no principal: using this decorator there is a programming error, never an anonymous caller.
    if (!principal) throw new UnauthorizedException('no authenticated caller');
    return principal;
  },
);

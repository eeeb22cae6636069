// Rate limits per principal and per source address on the routes marked @RateLimited(kind), counted by the RateLimiter
// (its counters in Redis, shared by every replica). Two guards, because they must sit on either side of PrincipalGuard
// in the APP_GUARD order:
// - AddressRateLimitGuard runs first, so requests with a wrong or missing credential are counted too (a token guesser
//   or a flood of unauthenticated calls is limited by where it comes from, before any work is done for it);
// - PrincipalRateLimitGuard runs after PrincipalGuard has named the caller, so one principal (or one stolen token)
//   is limited wherever it sends from. Public routes have no principal: only their address limit applies.
// - OnBehalfOfRateLimitGuard, after it too, counts a route's requests per person the caller acts for (the body's
//   `onBehalfOf`, only when the caller may act for them), whichever client sends them.
// A refused request gets 429 with `Retry-After` (seconds until the limit lets it through again).
import type { CanActivate, ExecutionContext, Provider } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { normalizeIp, ThrottlerException, type ThrottlerStorage } from '@nestjs/throttler';
import { mayActFor } from '../identity/principal-directory';
import type { Principal } from '../identity/principals.schema';
import { RATE_LIMITED } from './rate-limited.decorator';
import { type RateLimitBy, RateLimiter, type RateLimitPolicy } from './rate-limiter';

/** Injection token of the app's ThrottlerStorage (see redisRateLimitStorage). */
export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

interface RateLimitedRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
  principal?: Principal;
  body?: unknown;
}

abstract class RateLimitGuard implements CanActivate {
  constructor(
    private readonly by: RateLimitBy,
    private readonly limiter: RateLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<string | undefined>(RATE_LIMITED, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (kind === undefined) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<RateLimitedRequest>();
    const refusal = await this.count(kind, req);
    if (!refusal) return true;
    http
      .getResponse<{ setHeader(name: string, value: string): void }>()
      .setHeader('Retry-After', String(refusal.retryAfterSeconds));
    throw new ThrottlerException(refusal.message);
  }

  private async count(kind: string, req: RateLimitedRequest) {
    if (this.by === 'address') return this.limiter.countAddress(kind, addressOf(req));
    if (!req.principal) return undefined;
    if (this.by === 'principal') return this.limiter.countPrincipal(kind, req.principal);
    const person = onBehalfOf(req);
    return person === undefined ? undefined : this.limiter.countOnBehalfOf(kind, person);
  }
}

/** Before PrincipalGuard: counts every request to a limited route by its source address. */
export class AddressRateLimitGuard extends RateLimitGuard {
  constructor(limiter: RateLimiter, reflector: Reflector) {
    super('address', limiter, reflector);
  }
}

/** After PrincipalGuard: counts the requests of each authenticated principal. */
export class PrincipalRateLimitGuard extends RateLimitGuard {
  constructor(limiter: RateLimiter, reflector: Reflector) {
    super('principal', limiter, reflector);
  }
}

/** After PrincipalGuard: counts the requests made for each person a principal acts for. */
export class OnBehalfOfRateLimitGuard extends RateLimitGuard {
  constructor(limiter: RateLimiter, reflector: Reflector) {
    super('on-behalf-of', limiter, reflector);
  }
}

/**
 * The APP_GUARD providers, in the order they must run around the app's PrincipalGuard:
 * `[...before, { provide: APP_GUARD, useClass: PrincipalGuard }, ...after]`. The app provides RATE_LIMIT_STORAGE.
 */
export function rateLimitGuards(policy: RateLimitPolicy): { before: Provider[]; after: Provider[] } {
  const guard =
    (
      Guard: typeof AddressRateLimitGuard | typeof PrincipalRateLimitGuard | typeof OnBehalfOfRateLimitGuard,
    ) =>
    (storage: ThrottlerStorage, reflector: Reflector) =>
      new Guard(new RateLimiter(policy, storage), reflector);
  const inject = [RATE_LIMIT_STORAGE, Reflector];
  return {
    before: [{ provide: APP_GUARD, useFactory: guard(AddressRateLimitGuard), inject }],
    after: [
      { provide: APP_GUARD, useFactory: guard(PrincipalRateLimitGuard), inject },
      { provide: APP_GUARD, useFactory: guard(OnBehalfOfRateLimitGuard), inject },
    ],
  };
}

/** IPv6 clients are counted per /64 (one host can hold a whole /64), IPv4-mapped IPv6 as IPv4. */
function addressOf(req: RateLimitedRequest): string {
  return normalizeIp(req.ip ?? req.socket?.remoteAddress ?? 'unknown');
}

/**
 * The person the request is made for, when the caller may act for them. Read before the body is validated: a request
 * naming someone the caller may not act for is refused after the guards, and must not use up that person's count.
 */
function onBehalfOf(req: RateLimitedRequest): string | undefined {
  const named = (req.body as { onBehalfOf?: unknown } | undefined)?.onBehalfOf;
  if (typeof named !== 'string' || named === req.principal!.id) return undefined;
  return mayActFor(req.principal!, named) ? named : undefined;
}

// Rate limits per principal and per source address on the routes marked @RateLimited(kind), on @nestjs/throttler
// with its counters in Redis (shared by every replica). Two guards, because they must sit on either side of
// PrincipalGuard in the APP_GUARD order:
// - AddressRateLimitGuard runs first, so requests with a wrong or missing credential are counted too (a token guesser
//   or a flood of unauthenticated calls is limited by where it comes from, before any work is done for it);
// - PrincipalRateLimitGuard runs after PrincipalGuard has named the caller, so one principal (or one stolen token)
//   is limited wherever it sends from. Public routes have no principal: only their address limit applies.
// - OnBehalfOfRateLimitGuard, after it too, counts a route's requests per person the caller acts for (the body's
//   `onBehalfOf`, only when the caller may act for them), whichever client sends them.
// A refused request gets 429 with `Retry-After` (seconds until the limit lets it through again).
import { type ExecutionContext, type Provider } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import {
  normalizeIp,
  ThrottlerException,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { mayActFor } from '../identity/principal-directory';
import type { Principal } from '../identity/principals.schema';
import type { Logger } from '../logger';
import { RATE_LIMITED } from './rate-limited.decorator';
import type { RateLimit } from './rate-limit.schema';

/** A limit and the variable that set it (named in the 429's message, so an operator knows what to change). */
export interface NamedRateLimit extends RateLimit {
  setting: string;
}

/** The limits of one kind of route; a limit left out is off. */
export interface RouteRateLimits {
  /** What the requests are, for messages: "run starts". */
  what: string;
  /** Per principal of kind `person`. */
  person?: NamedRateLimit;
  /** Per principal of kind `machine` (CI, agent frameworks): usually higher. */
  machine?: NamedRateLimit;
  /** Per source address, whoever sends (with a credential or not). */
  address?: NamedRateLimit;
  /** Per person a principal acts for (the body's `onBehalfOf`), whichever principal sends; not when it acts for itself. */
  onBehalfOf?: NamedRateLimit;
}

export interface RateLimitPolicy {
  /** The deployment's KEY_PREFIX: counters of deployments sharing a Redis stay apart. */
  keyPrefix: string;
  /** Route kind (@RateLimited) → its limits. */
  routes: Record<string, RouteRateLimits>;
  logger: Logger;
}

/** Injection token of the app's ThrottlerStorage (see redisRateLimitStorage). */
export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

type By = 'principal' | 'address' | 'on-behalf-of';

interface RateLimitedRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
  principal?: Principal;
  body?: unknown;
}

/** What a refusal's message says of the counted party, by dimension. */
const PREPOSITION: Record<By, string> = { principal: 'by', address: 'from', 'on-behalf-of': 'for' };

abstract class RateLimitGuard extends ThrottlerGuard {
  constructor(
    private readonly by: By,
    private readonly policy: RateLimitPolicy,
    storage: ThrottlerStorage,
    reflector: Reflector,
  ) {
    const limitOf = (context: ExecutionContext) => rateLimitOf(by, policy, reflector, context);
    super(
      {
        // One throttler per guard, whose limit and window depend on the route (and the principal's kind).
        throttlers: [
          {
            name: by,
            limit: (context) => limitOf(context)!.limit,
            ttl: (context) => limitOf(context)!.windowMs,
            skipIf: (context) => limitOf(context) === undefined,
            getTracker: (req) => trackerOf(by, req as RateLimitedRequest),
            generateKey: (context, tracker) =>
              `${policy.keyPrefix}:rate-limit:${routeOf(reflector, context)}:${tracker}`,
            // Throttler's own headers carry the throttler's name (Retry-After-principal); ours are standard.
            setHeaders: false,
          },
        ],
      },
      storage,
      reflector,
    );
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const kind = routeOf(this.reflector, context)!;
    const limit = rateLimitOf(this.by, this.policy, this.reflector, context)!;
    const retryAfter = Math.max(1, detail.timeToBlockExpire);
    this.setResponseHeader(this.getRequestResponse(context).res, 'Retry-After', retryAfter);
    // One line per flood and window, not one per refused request.
    if (detail.totalHits === detail.limit + 1)
      this.policy.logger.warn(
        { route: kind, by: this.by, [this.by]: detail.tracker, limit: limit.text, setting: limit.setting },
        'rate limit reached: further requests are refused until the window ends',
      );
    const what = this.policy.routes[kind].what;
    throw new ThrottlerException(
      `too many ${what} ${PREPOSITION[this.by]} ${detail.tracker}: at most ${limit.text} ` +
        `(${limit.setting}); retry after ${retryAfter} s`,
    );
  }
}

/** Before PrincipalGuard: counts every request to a limited route by its source address. */
export class AddressRateLimitGuard extends RateLimitGuard {
  constructor(policy: RateLimitPolicy, storage: ThrottlerStorage, reflector: Reflector) {
    super('address', policy, storage, reflector);
  }
}

/** After PrincipalGuard: counts the requests of each authenticated principal. */
export class PrincipalRateLimitGuard extends RateLimitGuard {
  constructor(policy: RateLimitPolicy, storage: ThrottlerStorage, reflector: Reflector) {
    super('principal', policy, storage, reflector);
  }
}

/** After PrincipalGuard: counts the requests made for each person a principal acts for. */
export class OnBehalfOfRateLimitGuard extends RateLimitGuard {
  constructor(policy: RateLimitPolicy, storage: ThrottlerStorage, reflector: Reflector) {
    super('on-behalf-of', policy, storage, reflector);
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
    async (storage: ThrottlerStorage, reflector: Reflector) => {
      const instance = new Guard(policy, storage, reflector);
      await instance.onModuleInit();
      return instance;
    };
  const inject = [RATE_LIMIT_STORAGE, Reflector];
  return {
    before: [{ provide: APP_GUARD, useFactory: guard(AddressRateLimitGuard), inject }],
    after: [
      { provide: APP_GUARD, useFactory: guard(PrincipalRateLimitGuard), inject },
      { provide: APP_GUARD, useFactory: guard(OnBehalfOfRateLimitGuard), inject },
    ],
  };
}

function routeOf(reflector: Reflector, context: ExecutionContext): string | undefined {
  return reflector.getAllAndOverride<string>(RATE_LIMITED, [context.getHandler(), context.getClass()]);
}

/** The limit that applies to this request, or undefined (route not limited, limit off, no principal to count). */
function rateLimitOf(
  by: By,
  policy: RateLimitPolicy,
  reflector: Reflector,
  context: ExecutionContext,
): NamedRateLimit | undefined {
  const kind = routeOf(reflector, context);
  if (kind === undefined) return undefined;
  const route = policy.routes[kind];
  // A route marked with a kind the policy does not know is a wiring mistake: refuse rather than leave it open.
  if (!route) throw new Error(`no rate limits are configured for route kind "${kind}"`);
  if (by === 'address') return route.address;
  const req = context.switchToHttp().getRequest<RateLimitedRequest>();
  if (!req.principal) return undefined;
  if (by === 'on-behalf-of') return onBehalfOf(req) === undefined ? undefined : route.onBehalfOf;
  return req.principal.kind === 'machine' ? route.machine : route.person;
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

function trackerOf(by: By, req: RateLimitedRequest): string {
  if (by === 'principal') return req.principal!.id;
  if (by === 'on-behalf-of') return onBehalfOf(req)!;
  // IPv6 clients are counted per /64 (one host can hold a whole /64), IPv4-mapped IPv6 as IPv4.
  return normalizeIp(req.ip ?? req.socket?.remoteAddress ?? 'unknown');
}

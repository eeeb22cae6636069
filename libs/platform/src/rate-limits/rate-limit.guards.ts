// Rate limits per principal and per source address on the routes marked @RateLimited(kind), counted by the RateLimiter
// (its counters in Redis, shared by every replica). Two guards, because they must sit on either side of PrincipalGuard
// in the APP_GUARD order:
// - AddressRateLimitGuard runs first, so requests with a wrong or missing credential are counted too (a token guesser
//   or a flood of unauthenticated calls is limited by where it comes from). It starts the count and does not wait
//   for it: the count is kept on the request, and whatever comes next answers it first (answerAddressCount).
// - AfterAuthRateLimitGuard runs after PrincipalGuard has named the caller: it starts the count per principal (one
//   principal, or one stolen token, is limited wherever it sends from) and per person the caller acts for (the body's
//   `onBehalfOf`, only when the caller may act for them, whichever client sends them), then answers the address count,
//   then its own, in that order. Public routes have no principal: only their address limit applies.
// - PrincipalGuard answers the address count before it refuses a credential (401/403), so a request over its address
//   limit gets 429 whatever it carries, as when the address count was awaited before authentication.
// The counts of one request thus go to Redis in one pipeline (one round trip where they were two or three, issue 27):
// ioredis auto-pipelines the commands issued before the next setImmediate, and authentication issues no Redis command.
// Since the counts run together, a request refused by its address is counted for its principal too (and one refused
// for its principal, for the person it acts for): more counting, never less.
// A refused request gets 429 with `Retry-After` (seconds until the limit lets it through again); a count Redis could
// not make refuses it (503, fail closed).
import type { CanActivate, ExecutionContext, Provider } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { normalizeIp, ThrottlerException, type ThrottlerStorage } from '@nestjs/throttler';
import { mayActFor } from '../identity/principal-directory';
import type { Principal } from '../identity/principals.schema';
import { RATE_LIMITED } from './rate-limited.decorator';
import { RateLimiter, type RateLimitPolicy, type RateLimitRefusal } from './rate-limiter';

/** Injection token of the app's ThrottlerStorage (see redisRateLimitStorage). */
export const RATE_LIMIT_STORAGE = Symbol('RateLimitStorage');

/** Where AddressRateLimitGuard keeps the count it started on the request. */
const ADDRESS_COUNT = Symbol('countersign:address-count');

/** A count as it ended: never a rejected promise, so a count nobody awaits yet is no unhandled rejection. */
type Counted = { refusal: RateLimitRefusal | undefined } | { error: unknown };

interface RateLimitedRequest {
  ip?: string;
  socket?: { remoteAddress?: string };
  principal?: Principal;
  body?: unknown;
  [ADDRESS_COUNT]?: Promise<Counted>;
}

abstract class RateLimitGuard implements CanActivate {
  constructor(
    protected readonly limiter: RateLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<string | undefined>(RATE_LIMITED, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (kind === undefined) return true;
    await this.limit(kind, context);
    return true;
  }

  protected abstract limit(kind: string, context: ExecutionContext): Promise<void>;
}

/** Before PrincipalGuard: starts counting every request to a limited route by its source address. */
export class AddressRateLimitGuard extends RateLimitGuard {
  protected limit(kind: string, context: ExecutionContext): Promise<void> {
    const req = context.switchToHttp().getRequest<RateLimitedRequest>();
    req[ADDRESS_COUNT] = started(() => this.limiter.countAddress(kind, addressOf(req)));
    return Promise.resolve();
  }
}

/**
 * After PrincipalGuard: counts the requests of each authenticated principal and those made for each person a
 * principal acts for, in the same trip as the address count, which is answered first.
 */
export class AfterAuthRateLimitGuard extends RateLimitGuard {
  protected async limit(kind: string, context: ExecutionContext): Promise<void> {
    const req = context.switchToHttp().getRequest<RateLimitedRequest>();
    const principal = req.principal;
    const person = principal && onBehalfOf(req, principal);
    const counts = [
      principal && started(() => this.limiter.countPrincipal(kind, principal)),
      person !== undefined ? started(() => this.limiter.countOnBehalfOf(kind, person)) : undefined,
    ];
    await answerAddressCount(context);
    for (const count of counts) if (count) answer(context, await count);
  }
}

/**
 * Answers the address count AddressRateLimitGuard started for this request, if it did: throws 429 (with Retry-After)
 * when the address is over its limit, 503 when the count could not be made. PrincipalGuard calls it before refusing
 * a credential; AfterAuthRateLimitGuard before its own counts. Answering it twice gives the same answer.
 */
export async function answerAddressCount(context: ExecutionContext): Promise<void> {
  const count = context.switchToHttp().getRequest<RateLimitedRequest>()[ADDRESS_COUNT];
  if (count) answer(context, await count);
}

/** A count started now (its command issued in this tick), ending as Counted. */
function started(count: () => Promise<RateLimitRefusal | undefined>): Promise<Counted> {
  try {
    return count().then(
      (refusal) => ({ refusal }),
      (error: unknown) => ({ error }),
    );
  } catch (error) {
    return Promise.resolve({ error });
  }
}

/** Lets the request through, or throws what the count says: its error (503), or 429 with Retry-After. */
function answer(context: ExecutionContext, counted: Counted): void {
  if ('error' in counted) throw counted.error;
  const { refusal } = counted;
  if (!refusal) return;
  context
    .switchToHttp()
    .getResponse<{ setHeader(name: string, value: string): void }>()
    .setHeader('Retry-After', String(refusal.retryAfterSeconds));
  throw new ThrottlerException(refusal.message);
}

/**
 * The APP_GUARD providers, in the order they must run around the app's PrincipalGuard:
 * `[...before, { provide: APP_GUARD, useClass: PrincipalGuard }, ...after]`. The app provides RATE_LIMIT_STORAGE.
 * Both lists are needed: `before` only starts a count, which `after` (or PrincipalGuard's refusal) answers.
 */
export function rateLimitGuards(policy: RateLimitPolicy): { before: Provider[]; after: Provider[] } {
  const guard =
    (Guard: typeof AddressRateLimitGuard | typeof AfterAuthRateLimitGuard) =>
    (storage: ThrottlerStorage, reflector: Reflector) =>
      new Guard(new RateLimiter(policy, storage), reflector);
  const inject = [RATE_LIMIT_STORAGE, Reflector];
  return {
    before: [{ provide: APP_GUARD, useFactory: guard(AddressRateLimitGuard), inject }],
    after: [{ provide: APP_GUARD, useFactory: guard(AfterAuthRateLimitGuard), inject }],
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
function onBehalfOf(req: RateLimitedRequest, principal: Principal): string | undefined {
  const named = (req.body as { onBehalfOf?: unknown } | undefined)?.onBehalfOf;
  if (typeof named !== 'string' || named === principal.id) return undefined;
  return mayActFor(principal, named) ? named : undefined;
}

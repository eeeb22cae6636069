// Counting requests against a service's rate limits: one key scheme, one counting script (the throttler storage's, in
// Redis), one refusal. The Nest guards (rate-limit.guards.ts) and callers outside Nest (the MCP gateway) count here, so
// a principal's requests are counted and refused the same way at every door.
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Principal } from '../identity/principals.schema';
import type { Logger } from '../logger';
import type { RateLimit } from './rate-limit.schema';

/** A limit and the variable that set it (named in the 429's message, so an operator knows what to change). */
export interface NamedRateLimit extends RateLimit {
  setting: string;
}

/** The limits of one kind of request; a limit left out is off. */
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
  /** Request kind (a route's @RateLimited mark, or a kind a non-Nest caller counts) → its limits. */
  routes: Record<string, RouteRateLimits>;
  logger: Logger;
}

/** The RATE_LIMIT_* variables of a service's environment (each a RateLimit, or undefined when `off`). */
export type RateLimitSettingOf<Env> = Extract<keyof Env, `RATE_LIMIT_${string}`>;

/**
 * A service's policy from its environment: `routes` gets `named(setting)`, the limit that variable sets named after
 * it (undefined when it is `off`), and says which limits count which kind of request.
 */
export function rateLimitPolicy<Env extends { KEY_PREFIX: string }>(
  env: Env & { [S in RateLimitSettingOf<Env>]: RateLimit | undefined },
  logger: Logger,
  routes: (
    named: (setting: RateLimitSettingOf<Env>) => NamedRateLimit | undefined,
  ) => Record<string, RouteRateLimits>,
): RateLimitPolicy {
  const limits: { [S in RateLimitSettingOf<Env>]: RateLimit | undefined } = env;
  const named = (setting: RateLimitSettingOf<Env>): NamedRateLimit | undefined =>
    limits[setting] && { ...limits[setting], setting };
  return { keyPrefix: env.KEY_PREFIX, logger, routes: routes(named) };
}

/** A request the limit refuses: answer 429 with `Retry-After: retryAfterSeconds` and `message`. */
export interface RateLimitRefusal {
  retryAfterSeconds: number;
  /** e.g. "too many run starts by alice: at most 30/1m (RATE_LIMIT_RUN_STARTS); retry after 42 s" */
  message: string;
}

export type RateLimitBy = 'principal' | 'address' | 'on-behalf-of';

/** What a refusal's message says of the counted party, by dimension. */
const PREPOSITION: Record<RateLimitBy, string> = { principal: 'by', address: 'from', 'on-behalf-of': 'for' };

export class RateLimiter {
  constructor(
    private readonly policy: RateLimitPolicy,
    private readonly storage: ThrottlerStorage,
  ) {}

  /**
   * Counts one request of `kind` by `principal` (under its kind's limit). Resolves to the refusal past the limit,
   * undefined otherwise; rejects (503, ServiceUnavailableException) when Redis cannot be asked.
   */
  countPrincipal(
    kind: string,
    principal: Pick<Principal, 'id' | 'kind'>,
  ): Promise<RateLimitRefusal | undefined> {
    const route = this.route(kind);
    return this.count(
      kind,
      'principal',
      principal.id,
      principal.kind === 'machine' ? route.machine : route.person,
    );
  }

  /** Counts one request of `kind` from a source address (normalized by the caller). */
  countAddress(kind: string, address: string): Promise<RateLimitRefusal | undefined> {
    return this.count(kind, 'address', address, this.route(kind).address);
  }

  /** Counts one request of `kind` made for `person` by a principal that may act for them. */
  countOnBehalfOf(kind: string, person: string): Promise<RateLimitRefusal | undefined> {
    return this.count(kind, 'on-behalf-of', person, this.route(kind).onBehalfOf);
  }

  private route(kind: string): RouteRateLimits {
    const route = this.policy.routes[kind];
    // A kind the policy does not know is a wiring mistake: refuse rather than leave it open.
    if (!route) throw new Error(`no rate limits are configured for route kind "${kind}"`);
    return route;
  }

  private async count(
    kind: string,
    by: RateLimitBy,
    tracker: string,
    limit: NamedRateLimit | undefined,
  ): Promise<RateLimitRefusal | undefined> {
    if (!limit) return undefined;
    const key = `${this.policy.keyPrefix}:rate-limit:${kind}:${tracker}`;
    const counted = await this.storage.increment(key, limit.windowMs, limit.limit, limit.windowMs, by);
    if (!counted.isBlocked) return undefined;
    const retryAfterSeconds = Math.max(1, counted.timeToBlockExpire);
    // One line per flood and window, not one per refused request.
    if (counted.totalHits === limit.limit + 1)
      this.policy.logger.warn(
        { route: kind, by, [by]: tracker, limit: limit.text, setting: limit.setting },
        'rate limit reached: further requests are refused until the window ends',
      );
    const what = this.policy.routes[kind].what;
    return {
      retryAfterSeconds,
      message:
        `too many ${what} ${PREPOSITION[by]} ${tracker}: at most ${limit.text} ` +
        `(${limit.setting}); retry after ${retryAfterSeconds} s`,
    };
  }
}

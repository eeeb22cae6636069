// The gateway's per-principal rate limits as its doors ask them: the HTTP endpoint before a session opens and before
// each tool call, the stdio server before each tool call. Counted by the platform's RateLimiter (Redis), so every
// replica, and both transports, count the same principal's requests together.
import { Inject, Injectable } from '@nestjs/common';
import { type Logger, PrincipalDirectory, RateLimiter } from '@countersign/platform';
import type { LimitedRequest, RequestRefusal } from '@countersign/tool-providers';
import { GatewayLimited } from '../config/gateway-rate-limits';
import { LOGGER } from '../core/gateway-tokens';

@Injectable()
export class PrincipalLimits {
  constructor(
    private readonly limiter: RateLimiter,
    @Inject(PrincipalDirectory) private readonly directory: Pick<PrincipalDirectory, 'get'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Counts one request of `principalId`: undefined to go on, or the refusal (429; 503 when Redis cannot count). */
  async check(principalId: string, request: LimitedRequest): Promise<RequestRefusal | undefined> {
    const principal = this.directory.get(principalId);
    // Only authenticated principals reach here; one missing from the directory is refused, never let through.
    if (!principal) return { status: 503, message: `${principalId} is not in the principal directory` };
    try {
      const refusal = await this.limiter.countPrincipal(GatewayLimited[request], principal);
      return refusal && { status: 429, ...refusal };
    } catch (error) {
      // Fail closed: a request whose count cannot be checked does not go on.
      this.logger.warn(
        { principal: principalId, request, err: (error as Error).message },
        'rate limit not checked',
      );
      return { status: 503, message: 'rate limits cannot be checked right now (Redis); try again shortly' };
    }
  }
}

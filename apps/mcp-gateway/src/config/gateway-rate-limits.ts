// The gateway's rate limits per principal (RATE_LIMIT_* variables) as the platform's RateLimiter reads them: session
// opens and tool calls, each with its own limit for machine principals. No per-address limits: every request to /mcp
// is authenticated first, and what is counted is the principal.
import { type Logger, rateLimitPolicy, type RateLimitPolicy } from '@countersign/platform';
import type { LimitedRequest } from '@countersign/tool-providers';
import type { GatewayEnv } from './gateway-env';

/** The request kinds the gateway counts (in Redis keys; the approval service shares KEY_PREFIX, hence `mcp-`). */
export const GatewayLimited: Record<LimitedRequest, string> = {
  'session-open': 'mcp-session-open',
  'tool-call': 'mcp-tool-call',
};

export function gatewayRateLimits(env: GatewayEnv, logger: Logger): RateLimitPolicy {
  return rateLimitPolicy(env, logger, (named) => ({
    [GatewayLimited['session-open']]: {
      what: 'session opens',
      person: named('RATE_LIMIT_SESSION_OPENS'),
      machine: named('RATE_LIMIT_SESSION_OPENS_MACHINE'),
    },
    [GatewayLimited['tool-call']]: {
      what: 'tool calls',
      person: named('RATE_LIMIT_TOOL_CALLS'),
      machine: named('RATE_LIMIT_TOOL_CALLS_MACHINE'),
    },
  }));
}

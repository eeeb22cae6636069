// Requests refused before they named anyone: a bad, missing or replayed Slack signature, a forged, malformed or
// expired email-link token. Nobody vouches for them, so they are junk an attacker can send at any rate: they are
// counted and logged (what the attacker wrote cut short), never appended to the audit log, which would grow with
// every one of them. Refusals of someone known (an approver outside the group, self-approval) stay audited.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@countersign/platform';
import { Metrics } from '../core/metrics';
import { LOGGER } from '../core/tokens';

/** Characters of an attacker-controlled value that reach a log line. */
export const LOGGED_UNTRUSTED_CHARS = 64;

export type UnauthenticatedChannel = 'slack' | 'email';

/** `value` cut to `max` characters, saying how many were left out. */
export function truncated(value: string, max = LOGGED_UNTRUSTED_CHARS): string {
  if (value.length <= max) return value;
  return `${value.slice(0, max)}… (${value.length - max} more characters)`;
}

@Injectable()
export class UnauthenticatedRequests {
  constructor(
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** `untrusted`: what the request said (headers, a token), logged truncated. */
  refuse(
    channel: UnauthenticatedChannel,
    reason: string,
    untrusted: Record<string, string | undefined> = {},
  ): void {
    this.metrics.unauthenticated.inc({ channel, reason });
    const fields = Object.fromEntries(
      Object.entries(untrusted).map(([name, value]) => [name, value === undefined ? null : truncated(value)]),
    );
    this.logger.warn({ channel, reason, ...fields }, 'unauthenticated request refused');
  }
}

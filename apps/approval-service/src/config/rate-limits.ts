// The approval service's rate limits (RATE_LIMIT_* variables) as the guards read them, per kind of route.
import { type Logger, rateLimitPolicy, type RateLimitPolicy } from '@countersign/platform';
import type { ApprovalServiceEnv } from './approval-service.config';

/** Route kinds of the approval service (@RateLimited). */
export const ApprovalRoute = {
  Decision: 'decision',
  Slack: 'slack',
  SignIn: 'sign-in',
  ExternalSubmission: 'external-submission',
} as const;

export function approvalRateLimits(env: ApprovalServiceEnv, logger: Logger): RateLimitPolicy {
  return rateLimitPolicy(env, logger, (named) => ({
    [ApprovalRoute.Decision]: {
      what: 'decisions',
      person: named('RATE_LIMIT_DECISIONS'),
      machine: named('RATE_LIMIT_DECISIONS_MACHINE'),
      address: named('RATE_LIMIT_DECISIONS_ADDRESS'),
    },
    [ApprovalRoute.Slack]: { what: 'Slack interactions', address: named('RATE_LIMIT_SLACK_ADDRESS') },
    [ApprovalRoute.SignIn]: {
      what: 'sign-ins',
      person: named('RATE_LIMIT_SIGN_IN'),
      machine: named('RATE_LIMIT_SIGN_IN'),
      address: named('RATE_LIMIT_SIGN_IN_ADDRESS'),
    },
    [ApprovalRoute.ExternalSubmission]: {
      what: 'approval submissions',
      person: named('RATE_LIMIT_EXTERNAL_SUBMISSIONS'),
      machine: named('RATE_LIMIT_EXTERNAL_SUBMISSIONS'),
      onBehalfOf: named('RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER'),
      address: named('RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS'),
    },
  }));
}

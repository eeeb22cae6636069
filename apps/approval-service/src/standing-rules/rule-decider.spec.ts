import type { ApprovalRequest, StandingRule } from '@countersign/contracts';
import { ruleCovers } from './rule-decider';

const NOW = Date.UTC(2030, 0, 1);

const rule = (over: Partial<StandingRule> = {}): StandingRule => ({
  id: 'sr-1',
  tool: 'restart_service',
  requester: 'alice',
  createdBy: 'carol',
  createdAt: new Date(NOW - 1_000).toISOString(),
  expiresAt: new Date(NOW + 1_000).toISOString(),
  ...over,
});

const request = (over: Partial<ApprovalRequest> = {}) =>
  ({
    toolName: 'restart_service',
    requester: 'alice',
    args: { service: 'payments-api', target: { region: 'eu-1' } },
    ...over,
  }) as ApprovalRequest;

describe('ruleCovers', () => {
  it.each([
    ['the same tool and requester', rule(), request(), true],
    ['another tool', rule(), request({ toolName: 'scale_service' }), false],
    ['another requester', rule(), request({ requester: 'bob' }), false],
    [
      'matching argument patterns',
      rule({ args: { service: 'payments*', 'target.region': ['eu-*', 'us-*'] } }),
      request(),
      true,
    ],
    ['an argument pattern that does not match', rule({ args: { service: 'web' } }), request(), false],
    ['a missing argument', rule({ args: { replicas: '*' } }), request(), false],
    ['an expired rule', rule({ expiresAt: new Date(NOW).toISOString() }), request(), false],
  ])('%s → %s', (_what, r, req, covers) => {
    expect(ruleCovers(r, req, NOW)).toBe(covers);
  });
});

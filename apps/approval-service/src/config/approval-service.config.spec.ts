import { ConfigError } from '@countersign/platform';
import { loadApprovalServiceConfig } from './approval-service.config';

const valid = {
  DECISION_SIGNING_SECRET: 'decision-secret-0123456789',
  LINK_TOKEN_SECRET: 'link-secret-0123456789',
  APPROVALS_CONFIG: JSON.stringify({
    approvers: [{ id: 'bob', name: 'Bob', apiToken: 'bob-token-0123456789' }],
    groups: [{ id: 'ops', members: ['bob'] }],
    defaultGroup: 'ops',
  }),
};

describe('loadApprovalServiceConfig', () => {
  it('applies the defaults', () => {
    const { env } = loadApprovalServiceConfig(valid);
    expect(env).toMatchObject({
      PORT: 3001,
      APPROVAL_DEFAULT_EXPIRY: 1_800_000,
      TIMER_SWEEP_MS: 1_000,
      TIMER_LEASE_MS: 30_000,
      REQUEST_CONCURRENCY: 64,
      NOTIFY_CONCURRENCY: 16,
      NOTIFY_ATTEMPTS: 6,
      NOTIFY_BACKOFF: 1_000,
      DECISION_ATTEMPTS: 5,
      DECISION_BACKOFF: 500,
      SLACK_API_URL: 'https://slack.com/api/',
      QUEUE_PREFIX: '{countersign}',
    });
  });

  it('reads the demo approvals file by default', () => {
    const { approvals } = loadApprovalServiceConfig({ ...valid, APPROVALS_CONFIG: undefined });
    expect(approvals.approvers.map((a) => a.id)).toEqual(['bob', 'carol', 'dave']);
  });

  it.each([
    [{ LINK_TOKEN_SECRET: undefined }, 'LINK_TOKEN_SECRET'],
    [{ SLACK_BOT_TOKEN: 'xoxb-1' }, 'SLACK_SIGNING_SECRET: is required when SLACK_BOT_TOKEN is set'],
    [{ APPROVAL_DEFAULT_EXPIRY: 'soon' }, 'APPROVAL_DEFAULT_EXPIRY: must be a duration'],
    [{ TIMER_SWEEP_MS: '0' }, 'TIMER_SWEEP_MS'],
    [{ TIMER_LEASE_MS: 'long' }, 'TIMER_LEASE_MS'],
    [{ NOTIFY_CONCURRENCY: '0' }, 'NOTIFY_CONCURRENCY'],
    [{ DECISION_ATTEMPTS: 'many' }, 'DECISION_ATTEMPTS'],
    [{ DECISION_BACKOFF: '500' }, 'DECISION_BACKOFF: must be a duration'],
    [
      { APPROVALS_CONFIG: '{"approvers":[],"groups":[],"defaultGroup":"ops"}' },
      'APPROVALS_CONFIG defaultGroup: unknown group "ops"',
    ],
    [{ APPROVALS_CONFIG: 'missing/approvals.json' }, 'APPROVALS_CONFIG: cannot read missing/approvals.json'],
    [
      {
        APPROVALS_CONFIG: JSON.stringify({
          approvers: [{ id: 'bob', name: 'Bob', apiToken: 'bob-token-0123456789' }],
          groups: [{ id: 'ops', members: ['bob'] }],
          rules: [{ groups: ['ops'], expiresIn: '10m', escalation: { after: '10m', groups: ['ops'] } }],
        }),
      },
      "rules.0.escalation.after: must be shorter than the rule's expiresIn",
    ],
  ])('refuses to start and names the bad variable (%#)', (change, message) => {
    expect(() => loadApprovalServiceConfig({ ...valid, ...change })).toThrow(ConfigError);
    expect(() => loadApprovalServiceConfig({ ...valid, ...change })).toThrow(message);
  });
});

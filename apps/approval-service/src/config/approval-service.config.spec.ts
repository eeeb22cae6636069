import { ConfigError } from '@countersign/platform';
import { loadApprovalServiceConfig } from './approval-service.config';

const valid = {
  DECISION_SIGNING_SECRET: 'decision-secret-0123456789',
  LINK_TOKEN_SECRET: 'link-secret-0123456789',
  AUDIT_SIGNING_SECRET: 'audit-signing-secret-0123456789abcdef',
  APPROVALS_CONFIG: JSON.stringify({ groups: [{ id: 'ops', members: ['bob'] }], defaultGroup: 'ops' }),
};

const principals = (extra: object[] = []) =>
  JSON.stringify({
    principals: [{ id: 'bob', name: 'Bob', tokens: [{ sha256: 'b'.repeat(64) }] }, ...extra],
  });

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
      AUDIT_RETENTION: 90 * 86_400_000,
    });
  });

  it('reads the demo approvals and principals files by default', () => {
    const { approvals, principals } = loadApprovalServiceConfig({ ...valid, APPROVALS_CONFIG: undefined });
    expect(approvals.groups.map((g) => g.id)).toEqual(['ops', 'finance', 'leads']);
    expect(principals.principals.map((p) => p.id)).toEqual(
      expect.arrayContaining(['alice', 'bob', 'carol', 'dave', 'mallory']),
    );
  });

  it.each([
    [{ LINK_TOKEN_SECRET: undefined }, 'LINK_TOKEN_SECRET'],
    [{ SLACK_BOT_TOKEN: 'xoxb-1' }, 'SLACK_SIGNING_SECRET: is required when SLACK_BOT_TOKEN is set'],
    [{ APPROVAL_DEFAULT_EXPIRY: 'soon' }, 'APPROVAL_DEFAULT_EXPIRY: must be a duration'],
    [{ TIMER_SWEEP_MS: '0' }, 'TIMER_SWEEP_MS'],
    [{ APPROVAL_SHARDS: '17' }, 'APPROVAL_SHARDS'],
    [{ APPROVAL_SHARDS: '0' }, 'APPROVAL_SHARDS'],
    [{ TIMER_LEASE_MS: 'long' }, 'TIMER_LEASE_MS'],
    [{ NOTIFY_CONCURRENCY: '0' }, 'NOTIFY_CONCURRENCY'],
    [{ DECISION_ATTEMPTS: 'many' }, 'DECISION_ATTEMPTS'],
    [{ DECISION_BACKOFF: '500' }, 'DECISION_BACKOFF: must be a duration'],
    [{ AUDIT_SIGNING_SECRET: undefined }, 'AUDIT_SIGNING_SECRET'],
    [{ AUDIT_RETENTION: '23h' }, 'AUDIT_RETENTION: must be at least 1d'],
    [
      { APPROVALS_CONFIG: '{"groups":[],"defaultGroup":"ops"}' },
      'APPROVALS_CONFIG defaultGroup: unknown group "ops"',
    ],
    [
      { APPROVALS_CONFIG: '{"approvers":[],"groups":[]}' },
      'APPROVALS_CONFIG approvers: approvers moved to PRINCIPALS_CONFIG',
    ],
    [
      {
        PRINCIPALS_CONFIG: principals(),
        APPROVALS_CONFIG: '{"groups":[{"id":"ops","members":["bob","zed"]}]}',
      },
      'APPROVALS_CONFIG groups.0.members.1: unknown principal "zed" (not in PRINCIPALS_CONFIG)',
    ],
    [
      {
        PRINCIPALS_CONFIG: principals([{ id: 'bot', name: 'Bot', kind: 'machine', actAs: ['bob'] }]),
        APPROVALS_CONFIG: '{"groups":[{"id":"ops","members":["bob","bot"]}]}',
      },
      'groups.0.members.1: "bot" may act for others (actAs), so it may not approve',
    ],
    [
      { PRINCIPALS_CONFIG: principals([{ id: 'bob', name: 'Bob again' }]) },
      'PRINCIPALS_CONFIG principals.1.id: id must be unique',
    ],
    [
      { PRINCIPALS_CONFIG: principals([{ id: 'al', name: 'Al', actAs: ['bob'] }]) },
      'PRINCIPALS_CONFIG principals.1.actAs: only machine principals may act for others',
    ],
    [
      { PRINCIPALS_CONFIG: '{"principals":[{"id":"bob","name":"Bob","tokens":[{"sha256":"bob-token"}]}]}' },
      'PRINCIPALS_CONFIG principals.0.tokens.0.sha256: must be a lowercase hex SHA-256',
    ],
    [
      { PRINCIPALS_CONFIG: 'missing/principals.json' },
      'PRINCIPALS_CONFIG: cannot read missing/principals.json',
    ],
    [{ APPROVALS_CONFIG: 'missing/approvals.json' }, 'APPROVALS_CONFIG: cannot read missing/approvals.json'],
    [
      {
        APPROVALS_CONFIG: JSON.stringify({
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

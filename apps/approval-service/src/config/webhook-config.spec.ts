// The approvals API's webhook settings: an allow-list of origins, and the secret the per-client secrets derive from.
import { ConfigError } from '@countersign/platform';
import { loadApprovalServiceConfig } from './approval-service.config';

const valid = {
  DECISION_SIGNING_SECRET: 'decision-secret-0123456789',
  LINK_TOKEN_SECRET: 'link-secret-0123456789',
  AUDIT_SIGNING_SECRET: 'audit-secret-0123456789-0123456789',
  APPROVALS_CONFIG: JSON.stringify({ groups: [{ id: 'ops', members: ['bob'] }], defaultGroup: 'ops' }),
};

describe('webhook settings', () => {
  it('are off by default', () => {
    const { env } = loadApprovalServiceConfig(valid);
    expect(env.WEBHOOK_ALLOWED_ORIGINS).toEqual([]);
    expect(env.WEBHOOK_SIGNING_SECRET).toBeUndefined();
  });

  it('keep only the origin of each allowed entry', () => {
    const { env } = loadApprovalServiceConfig({
      ...valid,
      WEBHOOK_SIGNING_SECRET: 'webhook-secret-0123456789',
      WEBHOOK_ALLOWED_ORIGINS: 'https://agents.example.com/hooks, http://127.0.0.1:8080',
    });
    expect(env.WEBHOOK_ALLOWED_ORIGINS).toEqual(['https://agents.example.com', 'http://127.0.0.1:8080']);
  });

  it.each([
    [{ WEBHOOK_ALLOWED_ORIGINS: 'https://agents.example.com' }, 'WEBHOOK_SIGNING_SECRET: is required'],
    [
      {
        WEBHOOK_SIGNING_SECRET: 'webhook-secret-0123456789',
        WEBHOOK_ALLOWED_ORIGINS: 'ftp://files.example.com',
      },
      'WEBHOOK_ALLOWED_ORIGINS: "ftp://files.example.com" is not an http(s) origin',
    ],
    [{ WEBHOOK_SIGNING_SECRET: 'short' }, 'WEBHOOK_SIGNING_SECRET: must be at least 16 characters'],
  ])('refuse %j, naming the variable', (change, message) => {
    expect(() => loadApprovalServiceConfig({ ...valid, ...change })).toThrow(ConfigError);
    expect(() => loadApprovalServiceConfig({ ...valid, ...change })).toThrow(message);
  });
});

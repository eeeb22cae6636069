import { BaseEnvSchema, ConfigError, loadEnv } from './base-config';

describe('loadEnv', () => {
  const secret = {
    DECISION_SIGNING_SECRET: 'a-secret-of-sixteen+',
    AUDIT_SIGNING_SECRET: 'an-audit-secret-of-thirty-two-chars',
  };

  it('treats an empty variable as unset, so its default applies', () => {
    expect(loadEnv(BaseEnvSchema, { ...secret, REDIS_URL: '', KEY_PREFIX: '' })).toMatchObject({
      REDIS_URL: 'redis://127.0.0.1:6379',
      KEY_PREFIX: 'countersign',
    });
  });

  it('refuses a missing required variable and names it', () => {
    expect(() => loadEnv(BaseEnvSchema, { DECISION_SIGNING_SECRET: '' })).toThrow(ConfigError);
    expect(() => loadEnv(BaseEnvSchema, {})).toThrow(/DECISION_SIGNING_SECRET/);
    expect(() => loadEnv(BaseEnvSchema, {})).toThrow(/AUDIT_SIGNING_SECRET/);
  });

  it('refuses an audit signing secret shorter than 32 characters, current or previous', () => {
    expect(() => loadEnv(BaseEnvSchema, { ...secret, AUDIT_SIGNING_SECRET: 'x'.repeat(31) })).toThrow(
      /AUDIT_SIGNING_SECRET: must be at least 32 characters/,
    );
    expect(() =>
      loadEnv(BaseEnvSchema, { ...secret, AUDIT_SIGNING_PREVIOUS_SECRETS: `${'p'.repeat(32)},short` }),
    ).toThrow(/AUDIT_SIGNING_PREVIOUS_SECRETS.1: each must be at least 32 characters/);
  });

  it('reads the previous audit signing secrets as a comma-separated list', () => {
    const [a, b] = ['a'.repeat(32), 'b'.repeat(40)];
    expect(
      loadEnv(BaseEnvSchema, { ...secret, AUDIT_SIGNING_PREVIOUS_SECRETS: ` ${a}, ${b},` })
        .AUDIT_SIGNING_PREVIOUS_SECRETS,
    ).toEqual([a, b]);
    expect(loadEnv(BaseEnvSchema, secret).AUDIT_SIGNING_PREVIOUS_SECRETS).toBeUndefined();
  });

  it('names every bad variable at once', () => {
    expect(() => loadEnv(BaseEnvSchema, { ...secret, REDIS_URL: 'not a url', LOG_LEVEL: 'loud' })).toThrow(
      /REDIS_URL[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*REDIS_URL/,
    );
  });
});

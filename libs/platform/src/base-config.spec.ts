import { BaseEnvSchema, ConfigError, loadEnv } from './base-config';

describe('loadEnv', () => {
  const secret = { DECISION_SIGNING_SECRET: 'a-secret-of-sixteen+' };

  it('treats an empty variable as unset, so its default applies', () => {
    expect(loadEnv(BaseEnvSchema, { ...secret, REDIS_URL: '', KEY_PREFIX: '' })).toMatchObject({
      REDIS_URL: 'redis://127.0.0.1:6379',
      KEY_PREFIX: 'countersign',
    });
  });

  it('refuses a missing required variable and names it', () => {
    expect(() => loadEnv(BaseEnvSchema, { DECISION_SIGNING_SECRET: '' })).toThrow(ConfigError);
    expect(() => loadEnv(BaseEnvSchema, {})).toThrow(/DECISION_SIGNING_SECRET/);
  });

  it('names every bad variable at once', () => {
    expect(() => loadEnv(BaseEnvSchema, { ...secret, REDIS_URL: 'not a url', LOG_LEVEL: 'loud' })).toThrow(
      /REDIS_URL[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*REDIS_URL/,
    );
  });
});

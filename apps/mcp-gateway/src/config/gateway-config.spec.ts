import { ConfigError, loadJsonConfig } from '@countersign/platform';
import { GatewayConfigSchema } from './gateway-config.schema';
import { loadGatewayEnv } from './gateway-env';

const server = { transport: 'http', url: 'http://127.0.0.1:9/mcp' };
const valid = {
  mcpServers: { ops: server },
  roles: { operator: { allow: ['tool:*'] } },
  users: { alice: ['operator'] },
};
const load = (config: unknown) =>
  loadJsonConfig('GATEWAY_CONFIG', JSON.stringify(config), GatewayConfigSchema);
const env = { GATEWAY_TOKEN: 'gateway-token-0123456789', AUDIT_SIGNING_SECRET: 'a'.repeat(32) };

describe('GATEWAY_CONFIG', () => {
  it('fills in the defaults: a 45 s hold, outcomes kept a day, tasks offered', () => {
    expect(load(valid)).toMatchObject({
      hold: { maxMs: 45_000, progressEveryMs: 5_000 },
      resultTtlMs: 86_400_000,
      tasks: { enabled: true, defaultTtlMs: 3_600_000 },
      confirmation: { require: [], requireForAll: false },
    });
  });

  it.each([
    [{ ...valid, hold: { maxMs: 60_000 } }, 'hold.maxMs: must stay below the 60 s request timeout'],
    [{ ...valid, users: { alice: ['admin'] } }, 'users.alice.0: role "admin" is not defined in roles'],
    // Names every object has are no roles either (a lookup by `in` or `[]` found them on Object.prototype).
    [{ ...valid, users: { alice: ['toString'] } }, 'users.alice.0: role "toString" is not defined in roles'],
    [
      { ...valid, users: { alice: ['constructor'] } },
      'users.alice.0: role "constructor" is not defined in roles',
    ],
    [{ ...valid, mcpServers: {} }, 'mcpServers: must name at least one server'],
    // Nothing the gateway would ignore: a precondition it does not check again would bind no approval.
    [
      {
        ...valid,
        mcpServers: {
          ops: {
            ...server,
            preconditions: { scale_service: { call: { tool: 'get_service_status', args: {} } } },
          },
        },
      },
      'mcpServers.ops.preconditions: preconditions are not supported by the gateway',
    ],
    [{ ...valid, mcpServers: { my_server: server } }, 'mcpServers.my_server'],
    [
      { ...valid, roles: { operator: { allow: ['restart'] } } },
      'roles.operator.allow.0: must be tool:<name> or tool:*',
    ],
    [{ ...valid, httpTools: {} }, 'Unrecognized key: "httpTools"'],
  ])('refuses a bad config, naming the field (%#)', (config, message) => {
    expect(() => load(config)).toThrow(ConfigError);
    expect(() => load(config)).toThrow(message);
  });
});

describe('the gateway environment', () => {
  it('needs its own token, and a client token on stdio', () => {
    expect(() => loadGatewayEnv({ AUDIT_SIGNING_SECRET: env.AUDIT_SIGNING_SECRET })).toThrow('GATEWAY_TOKEN');
    expect(() => loadGatewayEnv({ ...env, GATEWAY_TRANSPORT: 'stdio' })).toThrow(
      'GATEWAY_CLIENT_TOKEN: is required with GATEWAY_TRANSPORT=stdio',
    );
    expect(loadGatewayEnv({ ...env, GATEWAY_TRANSPORT: 'stdio', GATEWAY_CLIENT_TOKEN: 't' })).toMatchObject({
      GATEWAY_TRANSPORT: 'stdio',
      PORT: 3003,
      APPROVAL_SERVICE_URL: 'http://127.0.0.1:3001',
    });
  });
});

describe('the gateway sessions and rate limits', () => {
  it('default to a cap per principal, a ceiling, and limits per principal kind', () => {
    expect(loadGatewayEnv(env)).toMatchObject({
      MAX_SESSIONS_PER_PRINCIPAL: 32,
      MAX_SESSIONS: 1000,
      RATE_LIMIT_SESSION_OPENS: { limit: 30, windowMs: 60_000 },
      RATE_LIMIT_SESSION_OPENS_MACHINE: { limit: 300, windowMs: 60_000 },
      RATE_LIMIT_TOOL_CALLS: { limit: 300, windowMs: 60_000 },
      RATE_LIMIT_TOOL_CALLS_MACHINE: { limit: 3000, windowMs: 60_000 },
    });
    expect(loadGatewayEnv({ ...env, RATE_LIMIT_TOOL_CALLS: 'off' }).RATE_LIMIT_TOOL_CALLS).toBeUndefined();
  });

  it.each([
    [{ MAX_SESSIONS_PER_PRINCIPAL: '0' }, 'MAX_SESSIONS_PER_PRINCIPAL'],
    [
      { MAX_SESSIONS_PER_PRINCIPAL: '8', MAX_SESSIONS: '4' },
      'MAX_SESSIONS: must be at least MAX_SESSIONS_PER_PRINCIPAL',
    ],
    [{ RATE_LIMIT_SESSION_OPENS: '30 a minute' }, 'RATE_LIMIT_SESSION_OPENS: must be <requests>/<window>'],
    [
      { RATE_LIMIT_TOOL_CALLS_MACHINE: '0/1m' },
      'RATE_LIMIT_TOOL_CALLS_MACHINE: must allow at least 1 request',
    ],
  ])('refuses a bad value, naming the variable (%#)', (vars, message) => {
    expect(() => loadGatewayEnv({ ...env, ...vars })).toThrow(message);
  });
});

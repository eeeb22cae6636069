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
    [{ ...valid, mcpServers: {} }, 'mcpServers: must name at least one server'],
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

// docker-compose.yml is checked without a Docker engine: parsed with `yaml`, its services, Redis flags and health
// checks asserted, and every environment variable it sets checked against the services' own config schemas —
// so the file stays in step with the configuration reference; and .env.example, the template of the .env file it
// reads, checked against it. (No Redis or network needed.)
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { z } from 'zod';
import { loadJsonConfig } from '@countersign/platform';
import { referencedVariables } from '@countersign/tool-providers';
import { loadAgentsConfig } from '../apps/agent-worker/src/config/agents-config.schema';
import { AgentWorkerEnvSchema, loadWorkerConfig } from '../apps/agent-worker/src/config/worker-config';
import {
  ApprovalServiceEnvSchema,
  loadApprovalServiceConfig,
} from '../apps/approval-service/src/config/approval-service.config';
import { GatewayConfigSchema } from '../apps/mcp-gateway/src/config/gateway-config.schema';
import { GatewayEnvSchema, loadGatewayEnv } from '../apps/mcp-gateway/src/config/gateway-env';
import { loadOpsServerConfig, OpsServerEnvSchema } from '../apps/ops-mcp-server/src/config/ops-server-config';

const root = join(__dirname, '..');
interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; target?: string };
  volumes?: string[];
  command?: string[];
  environment?: Record<string, string | null>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  container_name?: string;
}
const composeText = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const { services } = compose;

/** The secrets an operator must set; compose refuses to start without them (`${VAR:?message}`). */
const SECRETS = {
  DECISION_SIGNING_SECRET: 'operator-decision-secret-0123456789',
  LINK_TOKEN_SECRET: 'operator-link-secret-0123456789',
  AUDIT_SIGNING_SECRET: 'operator-audit-signing-secret-0123456789abcdef',
  OPS_MCP_TOKEN: 'operator-ops-mcp-token-0123456789',
  GATEWAY_TOKEN: 'operator-mcp-gateway-token-0123456789',
};

/**
 * The values compose would pass with `shell` as the environment: `${VAR:-default}` → the shell's or the default;
 * `${VAR:?message}` → the shell's, else compose stops with the message (thrown here); a bare key passes nothing.
 */
function resolvedEnv(
  service: ComposeService,
  shell: Record<string, string> = SECRETS,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(service.environment ?? {})) {
    if (value === null) continue;
    env[key] = String(value).replace(
      /\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g,
      (_m, name: string, kind?: string, word?: string) => {
        if (shell[name]) return shell[name];
        if (kind?.endsWith('?')) throw new Error(`${name}: ${word}`);
        return word ?? '';
      },
    );
  }
  return env;
}

const apps: [string, z.ZodObject, (env: Record<string, string>) => unknown][] = [
  ['agent-worker', AgentWorkerEnvSchema, loadWorkerConfig],
  ['approval-service', ApprovalServiceEnvSchema as unknown as z.ZodObject, loadApprovalServiceConfig],
];

/** Variables the agents config reads through its references ({"$env"}, {"$secret"}): the worker may be given them. */
const agentsConfigVariables = referencedVariables(loadAgentsConfig(join(root, 'config/agents.json')));
/** The same for the gateway's config. */
const gatewayConfigVariables = referencedVariables(
  loadJsonConfig('GATEWAY_CONFIG', join(root, 'config/gateway.json'), GatewayConfigSchema),
);
/** The apps of the compose file besides the two services: the ops MCP server and the MCP gateway. */
const servers = [
  ['ops-mcp-server', OpsServerEnvSchema, loadOpsServerConfig],
  ['mcp-gateway', GatewayEnvSchema as unknown as z.ZodObject, loadGatewayEnv],
] as (typeof apps)[number][];

it('has redis, the agent worker, the approval service, the ops MCP server, the MCP gateway and a mail catcher', () => {
  expect(Object.keys(services).sort()).toEqual([
    'agent-worker',
    'approval-service',
    'mailpit',
    'mcp-gateway',
    'ops-mcp-server',
    'redis',
  ]);
  expect(services.mailpit.image).toMatch(/^axllent\/mailpit/);
  expect(services.mailpit.ports).toContain('8025:8025');
});

it('runs Redis with AOF (fsync every second), noeviction and a persistent volume', () => {
  const command = services.redis.command!.join(' ');
  expect(command).toMatch(/--appendonly yes/);
  expect(command).toMatch(/--appendfsync everysec/);
  expect(command).toMatch(/--maxmemory-policy noeviction/);
  expect(compose.volumes).toHaveProperty('redis-data');
});

it('gives every service a health check, and starts the apps once Redis is healthy', () => {
  for (const [name, service] of Object.entries(services)) {
    expect({ name, test: service.healthcheck?.test?.length }).toEqual({ name, test: expect.any(Number) });
  }
  for (const [name] of apps) {
    expect(services[name].depends_on?.redis).toEqual({ condition: 'service_healthy' });
  }
});

it('lets the agent worker scale: no container name and no single fixed host port', () => {
  const worker = services['agent-worker'];
  expect(worker.container_name).toBeUndefined();
  for (const port of worker.ports ?? []) expect(port).toMatch(/^\d+-\d+:\d+$/);
});

it.each([...apps, ...servers])(
  'sets only variables the %s config knows, and every required one',
  (name, schema, load) => {
    const env = resolvedEnv(services[name]);
    const referenced =
      { 'agent-worker': agentsConfigVariables, 'mcp-gateway': gatewayConfigVariables }[name] ?? [];
    const known = [...Object.keys(schema.shape), ...referenced];
    for (const key of Object.keys(services[name].environment ?? {})) {
      expect({ key, known: known.includes(key) }).toEqual({ key, known: true });
    }
    const required = Object.keys(schema.shape).filter(
      (key) => !schema.shape[key].safeParse(undefined).success,
    );
    for (const key of required) expect({ key, set: key in env }).toEqual({ key, set: true });
    // The values compose passes with an empty shell are a valid configuration (files resolved from the repo
    // root, as from /app in the image).
    expect(() => load(env)).not.toThrow();
  },
);

it('points the workers at the ops MCP server with a token compose refuses to start without', () => {
  const worker = resolvedEnv(services['agent-worker']);
  expect(worker.OPS_MCP_URL).toBe('http://ops-mcp-server:3002/mcp');
  expect(worker.OPS_MCP_TOKEN).toBe(SECRETS.OPS_MCP_TOKEN);
  const { OPS_MCP_TOKEN: _unset, ...withoutToken } = SECRETS;
  expect(() => resolvedEnv(services['agent-worker'], withoutToken)).toThrow(
    /OPS_MCP_TOKEN: set OPS_MCP_TOKEN/,
  );
  const ops = resolvedEnv(services['ops-mcp-server']);
  expect({ redis: ops.REDIS_URL, prefix: ops.KEY_PREFIX, callers: ops.OPS_MCP_CALLERS }).toEqual({
    redis: worker.REDIS_URL,
    prefix: worker.KEY_PREFIX,
    callers: 'agent-worker,mcp-gateway',
  });
  expect(services['agent-worker'].depends_on?.['ops-mcp-server']).toEqual({ condition: 'service_healthy' });
});

it('points the MCP gateway at the approval service and the ops server, with the same Redis, prefix and audit secret', () => {
  const gateway = resolvedEnv(services['mcp-gateway']);
  const approvals = resolvedEnv(services['approval-service']);
  expect(gateway).toMatchObject({
    APPROVAL_SERVICE_URL: 'http://approval-service:3001',
    OPS_MCP_URL: 'http://ops-mcp-server:3002/mcp',
    GATEWAY_TOKEN: SECRETS.GATEWAY_TOKEN,
    GATEWAY_CONFIG: 'config/gateway.json',
    REDIS_URL: approvals.REDIS_URL,
    KEY_PREFIX: approvals.KEY_PREFIX,
    AUDIT_SIGNING_SECRET: approvals.AUDIT_SIGNING_SECRET,
  });
  const { GATEWAY_TOKEN: _unset, ...withoutToken } = SECRETS;
  expect(() => resolvedEnv(services['mcp-gateway'], withoutToken)).toThrow(
    /GATEWAY_TOKEN: set GATEWAY_TOKEN/,
  );
  expect(services['mcp-gateway'].depends_on).toEqual({
    redis: { condition: 'service_healthy' },
    'ops-mcp-server': { condition: 'service_healthy' },
    'approval-service': { condition: 'service_healthy' },
  });
  // The ops server lets the gateway's principal in, and the shipped directory has that principal, an approvals client.
  const principals = JSON.parse(readFileSync(join(root, 'config/principals.json'), 'utf8')) as {
    principals: { id: string; roles?: string[] }[];
  };
  expect(principals.principals.find((p) => p.id === 'mcp-gateway')?.roles).toContain('approvals-client');
});

it('wires both apps to the same Redis, prefixes, decision signing secret and audit signing secrets', () => {
  const shell = { ...SECRETS, AUDIT_SIGNING_PREVIOUS_SECRETS: 'previous-audit-signing-secret-0123456789' };
  const [worker, approvals] = apps.map(([name]) => resolvedEnv(services[name], shell));
  for (const key of [
    'REDIS_URL',
    'QUEUE_PREFIX',
    'QUEUE_SHARDS',
    'AUDIT_SHARDS',
    'KEY_PREFIX',
    'DECISION_SIGNING_SECRET',
    'AUDIT_SIGNING_SECRET',
    'AUDIT_SIGNING_PREVIOUS_SECRETS',
  ]) {
    expect({ key, value: worker[key] }).toEqual({ key, value: approvals[key] });
  }
  expect(worker.REDIS_URL).toBe('redis://redis:6379');
  expect(approvals.SMTP_URL).toBe('smtp://mailpit:1025');
});

it('refuses to start without real secrets instead of falling back to placeholder values', () => {
  expect(composeText).not.toMatch(/change-me/i);
  for (const [name] of apps) {
    expect(() => resolvedEnv(services[name], {})).toThrow(
      /DECISION_SIGNING_SECRET: set DECISION_SIGNING_SECRET/,
    );
  }
  for (const [name] of apps) {
    expect(() => resolvedEnv(services[name], { DECISION_SIGNING_SECRET: 'x'.repeat(20) })).toThrow(
      /AUDIT_SIGNING_SECRET: set AUDIT_SIGNING_SECRET/,
    );
  }
  expect(() =>
    resolvedEnv(services['approval-service'], {
      DECISION_SIGNING_SECRET: 'x'.repeat(20),
      AUDIT_SIGNING_SECRET: 'a'.repeat(32),
    }),
  ).toThrow(/LINK_TOKEN_SECRET: set LINK_TOKEN_SECRET/);
});

it('mounts the config files read-only instead of baking them into the images', () => {
  for (const name of [...apps, ...servers].map(([app]) => app)) {
    expect({ name, volumes: services[name].volumes }).toEqual({ name, volumes: ['./config:/app/config:ro'] });
  }
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
  expect(ignored).toContain('config');
  expect(readFileSync(join(root, 'docker', 'Dockerfile'), 'utf8')).not.toMatch(/^COPY\b.*\sconfig\b/m);
});

it('builds the apps from one Dockerfile whose single build stage compiles everything once', () => {
  const dockerfile = readFileSync(join(root, 'docker', 'Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map(([, from, stage]) => ({
    from,
    stage,
  }));
  expect(stages.map((s) => s.stage)).toEqual([
    'build',
    'runtime',
    'agent-worker',
    'approval-service',
    'ops-mcp-server',
    'mcp-gateway',
  ]);
  expect(dockerfile.match(/^RUN npm ci/gm)).toHaveLength(1);
  expect(dockerfile.match(/^RUN npm run build/gm)).toHaveLength(1);
  for (const name of [...apps, ...servers].map(([app]) => app)) {
    expect(services[name].build).toEqual({ context: '.', dockerfile: 'docker/Dockerfile', target: name });
    expect(stages.find((s) => s.stage === name)?.from).toBe('runtime');
    const stage = dockerfile.slice(dockerfile.indexOf(`AS ${name}\n`)).split(/^FROM /m)[0];
    expect(stage).toContain(`CMD ["node", "dist/apps/${name}/src/main.js"]`);
    expect(existsSync(join(root, 'apps', name, 'src', 'main.ts'))).toBe(true);
  }
});

describe('.env.example, the template of the .env file compose reads', () => {
  /** `KEY=value` lines of the template (comments and blank lines left out). */
  const example = Object.fromEntries(
    readFileSync(join(root, '.env.example'), 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  ) as Record<string, string>;
  /** Every variable compose takes from its environment: `${VAR…}` anywhere, and keys passed through bare. */
  const composeVariables = new Set([
    ...[...composeText.matchAll(/\$\{(\w+)/g)].map(([, name]) => name),
    ...Object.values(services).flatMap((service) =>
      Object.entries(service.environment ?? {})
        .filter(([, value]) => value === null)
        .map(([key]) => key),
    ),
  ]);

  it('lists every variable compose takes from its environment, and no other', () => {
    expect(Object.keys(example).sort()).toEqual([...composeVariables].sort());
  });

  it('leaves the secrets empty, so compose refuses to start until they are set', () => {
    for (const name of ['DECISION_SIGNING_SECRET', 'LINK_TOKEN_SECRET', 'AUDIT_SIGNING_SECRET'])
      expect({ name, value: example[name] }).toEqual({ name, value: '' });
    expect(() => resolvedEnv(services['approval-service'], example)).toThrow(/DECISION_SIGNING_SECRET/);
  });

  it('gives, once its secrets are filled in, a valid configuration to every service', () => {
    const shell = {
      ...example,
      DECISION_SIGNING_SECRET: SECRETS.DECISION_SIGNING_SECRET,
      LINK_TOKEN_SECRET: SECRETS.LINK_TOKEN_SECRET,
      AUDIT_SIGNING_SECRET: SECRETS.AUDIT_SIGNING_SECRET,
    };
    for (const [name, , load] of [...apps, ...servers])
      expect(() => load(resolvedEnv(services[name], shell))).not.toThrow();
  });

  it('holds machine tokens whose hashes the shipped principal directory has', () => {
    const principals = JSON.parse(readFileSync(join(root, 'config/principals.json'), 'utf8')) as {
      principals: { id: string; tokens?: { sha256: string }[] }[];
    };
    const hashesOf = (id: string) =>
      principals.principals.find((p) => p.id === id)?.tokens?.map((t) => t.sha256);
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(hashesOf('agent-worker')).toContain(sha256(example.OPS_MCP_TOKEN));
    expect(hashesOf('mcp-gateway')).toContain(sha256(example.GATEWAY_TOKEN));
  });
});

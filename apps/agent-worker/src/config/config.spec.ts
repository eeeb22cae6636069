import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InfraStore } from '@countersign/demo-infra';
import { createLogger } from '@countersign/platform';
import { SecretSource, ToolProviders } from '@countersign/tool-providers';
import { AgentCatalog } from '../agents/agent-catalog';
import { ChatModels } from '../models/chat-models';
import { RunbookLibrary } from '../runbooks/runbook-library';
import { AgentsConfigSchema, loadAgentsConfig } from './agents-config.schema';
import { AgentWorkerEnvSchema, loadWorkerConfig, loadWorkerEnv } from './worker-config';

const base = {
  DECISION_SIGNING_SECRET: 'a-secret-of-16-chars',
  AUDIT_SIGNING_SECRET: 'an-audit-signing-secret-of-32-chars',
};
const silent = createLogger('test', 'silent');
const noProviders = () =>
  new ToolProviders({ mcpServers: {}, httpTools: {} }, { secrets: new SecretSource({}), logger: silent });

describe('worker config', () => {
  it('refuses to start naming the bad variable', () => {
    expect(() => loadWorkerEnv({})).toThrow(/DECISION_SIGNING_SECRET/);
    expect(() => loadWorkerEnv({})).toThrow(/AUDIT_SIGNING_SECRET/);
    expect(() => loadWorkerEnv({ ...base, WORKER_CONCURRENCY: 'many' })).toThrow(/WORKER_CONCURRENCY/);
    expect(() => loadWorkerEnv({ ...base, SEED_DEMO_INFRA: 'perhaps' })).toThrow(/SEED_DEMO_INFRA/);
    expect(() => loadWorkerEnv({ ...base, REQUEST_SWEEP_MS: '0' })).toThrow(/REQUEST_SWEEP_MS/);
  });

  it('has no test switch: faults are injected by tests through run hooks, never by a variable', () => {
    expect(Object.keys(AgentWorkerEnvSchema.shape).filter((name) => /TEST/.test(name))).toEqual([]);
    expect(loadWorkerEnv({ ...base, COUNTERSIGN_TEST_FAULTS: 'decision-park-then-kill' })).not.toHaveProperty(
      'COUNTERSIGN_TEST_FAULTS',
    );
  });

  it('refuses a staleness window so short that a slow heartbeat would be taken for a dead worker', () => {
    expect(() =>
      loadWorkerEnv({ ...base, EXECUTION_HEARTBEAT_MS: '1000', EXECUTION_STALE_MS: '2000' }),
    ).toThrow(/EXECUTION_STALE_MS/);
  });

  it('reads the agents and principals files with the environment', () => {
    const config = loadWorkerConfig({ ...base, AGENTS_CONFIG: 'test/support/agents.json' });
    expect(Object.keys(config.agents.agents)).toContain('ops');
    expect(config.principals.principals.length).toBeGreaterThan(0);
    expect(() => loadWorkerConfig({ ...base, AGENTS_CONFIG: 'no/such/agents.json' })).toThrow(
      /AGENTS_CONFIG/,
    );
  });

  it('has defaults for everything else', () => {
    expect(loadWorkerEnv(base)).toMatchObject({
      PORT: 3000,
      AGENTS_CONFIG: 'config/agents.json',
      WORKER_CONCURRENCY: 16,
      SEED_DEMO_INFRA: false,
      MAX_STALLED_COUNT: 3,
      EXECUTION_HEARTBEAT_MS: 1_000,
      EXECUTION_STALE_MS: 10_000,
      REQUEST_SWEEP_MS: 5_000,
    });
  });
});

describe('agents config', () => {
  const agent = (extra: object) => ({
    agents: {
      ops: {
        tools: ['restart_service'],
        roles: { op: { allow: ['tool:*'] } },
        users: { alice: ['op'] },
        ...extra,
      },
    },
  });
  const catalog = (config: object, providers = noProviders()) =>
    new AgentCatalog(
      { agents: AgentsConfigSchema.parse(config) },
      RunbookLibrary.of([]),
      {} as InfraStore,
      providers,
      new ChatModels({ env: loadWorkerEnv(base) }),
      silent,
      { record: async () => {} },
    );

  it('loads the repo config', () => {
    expect(Object.keys(loadAgentsConfig(join(__dirname, '../../../../config/agents.json')).agents)).toEqual([
      'ops',
      'ops-llm',
    ]);
  });

  it('names the file and the field of an invalid config', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cs-')), 'agents.json');
    writeFileSync(file, JSON.stringify({ agents: { ops: { tools: [] } } }));
    expect(() => loadAgentsConfig(file)).toThrow(/agents\.ops\.tools/);
  });

  it.each(['admin', 'toString', 'constructor'])(
    'refuses a user with the role "%s" its agent does not define',
    (role) => {
      const file = join(mkdtempSync(join(tmpdir(), 'cs-')), 'agents.json');
      writeFileSync(file, JSON.stringify(agent({ users: { alice: [role] } })));
      expect(() => loadAgentsConfig(file)).toThrow(
        `agents.ops.users.alice.0: role "${role}" is not defined in roles`,
      );
    },
  );

  it.each([
    [agent({ tools: ['format_disk'] }), /unknown tool "format_disk"/],
    [agent({ tools: [{ name: 'restart_service', tier: 'auto' }] }), /never lower it to auto/],
    [agent({ confirmation: { require: ['list_services'] } }), /not one of this agent's tools/],
  ])('refuses a config that would fail open or name nothing (%#)', (config, message) => {
    expect(() => catalog(config)).toThrow(message);
  });

  describe('tool providers', () => {
    const withProviders = (extra: object, agentExtra: object) => ({ ...extra, ...agent(agentExtra) });
    const server = { transport: 'http', url: 'http://127.0.0.1:9/mcp' };
    const ticket = {
      description: 'Opens a ticket',
      method: 'POST',
      url: 'http://tickets.internal/projects/{project}/tickets',
      args: { type: 'object', properties: { project: { type: 'string' } }, required: ['project'] },
    };
    const catalogWith = (config: object) => {
      const parsed = AgentsConfigSchema.parse(config);
      return catalog(config, new ToolProviders(parsed, { secrets: new SecretSource({}), logger: silent }));
    };

    it('refuses an agent naming an MCP server that is not declared', () => {
      const config = withProviders({ mcpServers: { fs: server } }, { tools: [{ server: 'files' }] });
      expect(() => catalogWith(config)).toThrow(/unknown MCP server "files" \(declared: fs\)/);
    });

    it('lets confirmation.require name a tool its servers may list later, by their prefix', () => {
      const ok = withProviders(
        { mcpServers: { fs: server } },
        { tools: [{ server: 'fs' }], confirmation: { require: ['fs__read_file'] } },
      );
      expect(() => catalogWith(ok)).not.toThrow();
      const other = withProviders(
        { mcpServers: { fs: server } },
        { tools: [{ server: 'fs' }], confirmation: { require: ['db__drop'] } },
      );
      expect(() => catalogWith(other)).toThrow(/"db__drop" is not one of this agent's tools/);
    });

    it('registers an HTTP tool by name with its configured tier (confirm unless the config says)', () => {
      const ops = catalogWith(
        withProviders({ httpTools: { open_ticket: ticket } }, { tools: ['open_ticket'] }),
      ).get('ops')!;
      expect(ops.registry.get('open_ticket')).toMatchObject({ tier: 'confirm', jsonSchema: ticket.args });
    });

    it('refuses an MCP server whose URL is missing from the environment or is not http(s)', () => {
      const fromEnv = { ...server, url: { $env: 'TICKETS_MCP_URL' } };
      expect(() => catalogWith(withProviders({ mcpServers: { tickets: fromEnv } }, {}))).toThrow(
        /mcpServers\.tickets\.url: TICKETS_MCP_URL is not set/,
      );
      const ftp = { ...server, url: 'ftp://tickets.internal/mcp' };
      expect(() => catalogWith(withProviders({ mcpServers: { tickets: ftp } }, {}))).toThrow(
        /mcpServers\.tickets\.url: "ftp:\/\/tickets\.internal\/mcp" is not an http\(s\) URL/,
      );
    });

    it('refuses an HTTP tool whose URL placeholder is not a required argument', () => {
      const bad = { ...ticket, url: 'http://tickets.internal/{team}/tickets' };
      expect(() => catalogWith(withProviders({ httpTools: { open_ticket: bad } }, {}))).toThrow(
        /httpTools\.open_ticket\.url: placeholder \{team\}/,
      );
    });

    it.each([
      [{ mcpServers: { 'fs.files': server } }, /mcpServers/],
      [{ mcpServers: { fs: { ...server, tiers: { '*': 'sometimes' } } } }, /mcpServers\.fs\.tiers/],
      [{ mcpServers: { fs: { ...server, headers: { Authorization: { $secret: 'lower' } } } } }, /headers/],
      [{ mcpServers: { fs: { transport: 'stdio' } } }, /mcpServers\.fs\.command/],
      [
        { httpTools: { open_ticket: { ...ticket, args: { type: 'string' } } } },
        /httpTools\.open_ticket\.args/,
      ],
    ])('names the bad field of a provider declaration (%#)', (extra, message) => {
      const file = join(mkdtempSync(join(tmpdir(), 'cs-')), 'agents.json');
      writeFileSync(file, JSON.stringify(withProviders(extra, {})));
      expect(() => loadAgentsConfig(file)).toThrow(message);
    });
  });

  it('lets a config raise a tier', () => {
    const ops = catalog(agent({ tools: [{ name: 'restart_service', tier: 'manual_only' }] })).get('ops')!;
    expect(ops.registry.get('restart_service')?.tier).toBe('manual_only');
  });
});

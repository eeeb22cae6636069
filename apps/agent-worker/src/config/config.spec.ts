import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCatalog } from '../agents/agent-catalog';
import type { InfraStore } from '../infra/infra-store';
import { AgentsConfigSchema, loadAgentsConfig } from './agents-config.schema';
import { loadWorkerConfig } from './worker-config';

const base = { DECISION_SIGNING_SECRET: 'a-secret-of-16-chars' };

describe('worker config', () => {
  it('refuses to start naming the bad variable', () => {
    expect(() => loadWorkerConfig({})).toThrow(/DECISION_SIGNING_SECRET/);
    expect(() => loadWorkerConfig({ ...base, WORKER_CONCURRENCY: 'many' })).toThrow(/WORKER_CONCURRENCY/);
    expect(() => loadWorkerConfig({ ...base, SEED_DEMO_INFRA: 'perhaps' })).toThrow(/SEED_DEMO_INFRA/);
    expect(() => loadWorkerConfig({ ...base, REQUEST_SWEEP_MS: '0' })).toThrow(/REQUEST_SWEEP_MS/);
  });

  it('takes test faults only by their names, and none unless asked', () => {
    expect(loadWorkerConfig(base).COUNTERSIGN_TEST_FAULTS).toEqual([]);
    expect(
      loadWorkerConfig({
        ...base,
        COUNTERSIGN_TEST_FAULTS: 'decision-park-then-kill, decision-park-then-fail-publish',
      }).COUNTERSIGN_TEST_FAULTS,
    ).toEqual(['decision-park-then-kill', 'decision-park-then-fail-publish']);
    expect(() => loadWorkerConfig({ ...base, COUNTERSIGN_TEST_FAULTS: 'crash-sometimes' })).toThrow(
      /COUNTERSIGN_TEST_FAULTS/,
    );
  });

  it('refuses a staleness window so short that a slow heartbeat would be taken for a dead worker', () => {
    expect(() =>
      loadWorkerConfig({ ...base, EXECUTION_HEARTBEAT_MS: '1000', EXECUTION_STALE_MS: '2000' }),
    ).toThrow(/EXECUTION_STALE_MS/);
  });

  it('has defaults for everything else', () => {
    expect(loadWorkerConfig(base)).toMatchObject({
      PORT: 3000,
      AGENTS_CONFIG: 'config/agents.json',
      WORKER_CONCURRENCY: 16,
      SEED_DEMO_INFRA: true,
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
  const catalog = (config: object) =>
    new AgentCatalog(AgentsConfigSchema.parse(config), loadWorkerConfig(base), {} as InfraStore);

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

  it.each([
    [agent({ tools: ['format_disk'] }), /unknown tool "format_disk"/],
    [agent({ tools: [{ name: 'restart_service', tier: 'auto' }] }), /never lower it to auto/],
    [agent({ users: { alice: ['admin'] } }), /role "admin" is not defined/],
    [agent({ confirmation: { require: ['list_services'] } }), /not one of this agent's tools/],
  ])('refuses a config that would fail open or name nothing (%#)', (config, message) => {
    expect(() => catalog(config)).toThrow(message);
  });

  it('lets a config raise a tier', () => {
    const ops = catalog(agent({ tools: [{ name: 'restart_service', tier: 'manual_only' }] })).get('ops')!;
    expect(ops.registry.get('restart_service')?.tier).toBe('manual_only');
  });
});

// `countersign policy test` as CI runs it: the real binary (the compiled CLI), as a process, from outside the repo.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..');
const bin = join(root, 'bin', 'countersign.js');
const CONFIG = {
  agents: join(root, 'config', 'agents.json'),
  approvals: join(root, 'config', 'approvals.json'),
  principals: join(root, 'config', 'principals.json'),
};

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function policyTest(
  file: string,
  env: Record<string, string> = {},
  flags: string[] = [],
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, 'policy', 'test', file, ...flags],
      {
        cwd: tmpdir(),
        timeout: 30_000,
        env: {
          PATH: process.env.PATH ?? '',
          AGENTS_CONFIG: CONFIG.agents,
          APPROVALS_CONFIG: CONFIG.approvals,
          PRINCIPALS_CONFIG: CONFIG.principals,
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function write(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cs-policy-test-')), name);
  writeFileSync(file, text);
  return file;
}

/** The shipped agents config's ops agent, plus a confirmation handler approving restarts in staging. */
function withStagingHandler(): string {
  return write(
    'agents.json',
    JSON.stringify({
      agents: {
        ops: {
          tools: ['get_service_status', 'restart_service', 'scale_service', 'delete_volume'],
          roles: { operator: { allow: ['tool:*'] } },
          users: { alice: ['operator'] },
          confirmationHandler: {
            kind: 'rules',
            name: 'staging-auto',
            rules: [
              {
                name: 'staging-restarts',
                tools: ['restart_*'],
                when: { env: { DEPLOY_ENV: 'staging' } },
                decision: 'approve',
              },
              { name: 'any-delete', tools: ['delete_*'], decision: 'approve' },
            ],
          },
        },
      },
    }),
  );
}

describe('countersign policy test', () => {
  it('passes the shipped example against config/ and exits 0', async () => {
    const result = await policyTest(join(root, 'config', 'policy-tests.json'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^PASS +payments need two of finance .* confirm finance q2 +confirm finance q2 +confirm tier; route "payments need two approvers"/m,
    );
    expect(result.stdout).toMatch(
      /^PASS +a viewer may not restart .* denied +denied +rbac: User "mallory" lacks/m,
    );
    expect(result.stdout).toContain('6 passed, 0 failed');
  });

  it('exits 1 on a wrong expectation, naming the case, with the actual outcome and what decided it', async () => {
    const cases = write(
      'cases.json',
      JSON.stringify([
        {
          name: 'status is auto',
          principal: 'alice',
          agent: 'ops',
          tool: 'get_service_status',
          args: { service: 'api' },
          expect: 'auto',
        },
        {
          name: 'payments by ops alone',
          principal: 'alice',
          agent: 'ops',
          tool: 'restart_service',
          args: { service: 'payments' },
          expect: { confirm: { groups: ['ops'], quorum: 1 } },
        },
      ]),
    );
    const result = await policyTest(cases);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^PASS +status is auto/m);
    expect(result.stdout).toMatch(
      /^FAIL +payments by ops alone .* confirm ops q1 +confirm finance q2 +confirm tier; route "payments need two approvers"/m,
    );
    expect(result.stdout).toContain('1 passed, 1 failed');
    expect(result.stderr).toBe('countersign: 1 of 2 policy cases failed: payments by ops alone\n');
  });

  it('evaluates a confirmation handler rule (YAML cases, configs by flag): auto in staging, people elsewhere, never manual', async () => {
    const cases = write(
      'cases.yaml',
      [
        'cases:',
        '  - { name: restart in staging, principal: alice, tool: restart_service, args: { service: api }, expect: auto }',
        '  - { name: delete stays manual, principal: alice, tool: delete_volume, args: { volume: scratch }, expect: manual }',
        '',
      ].join('\n'),
    );
    const flags = ['--agents-config', withStagingHandler()];
    const staging = await policyTest(
      cases,
      { DEPLOY_ENV: 'staging', AGENTS_CONFIG: '/nonexistent.json' },
      flags,
    );
    expect(staging.stdout).toMatch(
      /^PASS +restart in staging .* approved by handler:staging-auto \(rule staging-restarts\)/m,
    );
    expect(staging.stdout).toMatch(/^PASS +delete stays manual .* manual_only tier/m);
    expect(staging.code).toBe(0);

    const production = await policyTest(cases, { DEPLOY_ENV: 'production' }, flags);
    expect(production.code).toBe(1);
    expect(production.stdout).toMatch(/^FAIL +restart in staging .* auto +confirm ops q1/m);
  });

  it("evaluates a Cedar policy set in RBAC's place: an argument picks the group and quorum, no permit is denied", async () => {
    // The shipped example set (config/policies), alice an operator in the directory, bob in no policy group.
    const principals = JSON.parse(readFileSync(CONFIG.principals, 'utf8')) as {
      principals: { id: string; policyGroups?: string[] }[];
    };
    for (const p of principals.principals) if (p.id === 'alice') p.policyGroups = ['operators'];
    const agents = {
      policy: { cedar: join(root, 'config', 'policies') },
      agents: {
        ops: {
          tools: ['get_service_status', 'restart_service', 'scale_service'],
          roles: { operator: { allow: ['tool:*'] } },
          users: { alice: ['operator'], bob: ['operator'] },
        },
      },
    };
    const cases = write(
      'cases.json',
      JSON.stringify([
        {
          name: 'status',
          principal: 'alice',
          tool: 'get_service_status',
          args: { service: 'web' },
          expect: 'auto',
        },
        {
          name: 'scale a little',
          principal: 'alice',
          tool: 'scale_service',
          args: { service: 'web', replicas: 3 },
          expect: { confirm: { groups: ['ops'], quorum: 1 } },
        },
        {
          name: 'scale a lot',
          principal: 'alice',
          tool: 'scale_service',
          args: { service: 'web', replicas: 8 },
          expect: { confirm: { groups: ['ops'], quorum: 2 } },
        },
        {
          name: 'no permit',
          principal: 'bob',
          tool: 'get_service_status',
          args: { service: 'web' },
          expect: 'denied',
        },
      ]),
    );
    const result = await policyTest(cases, {}, [
      '--agents-config',
      write('agents.json', JSON.stringify(agents)),
      '--principals-config',
      write('principals.json', JSON.stringify(principals)),
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^PASS +scale a lot .* confirm ops q2 +confirm ops q2 .*policy ops-scale-up-large/m,
    );
    expect(result.stdout).toContain('4 passed, 0 failed');
    expect(result.code).toBe(0);
  });

  it('refuses a cases file that is not valid, naming the field (exit 2)', async () => {
    const cases = write(
      'bad.json',
      JSON.stringify([{ principal: 'alice', tool: 'restart_service', expect: 'maybe' }]),
    );
    const result = await policyTest(cases);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cases\.0\.expect: /);
  });
});

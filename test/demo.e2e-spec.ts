// `npm run demo` in CI: spawned as a child process in non-interactive mode (the approver stand-in decides),
// it must end with the expected summary and exit code 0.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TEST_REDIS_URL } from './support/redis';

jest.setTimeout(90_000);

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = join(__dirname, '..');
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      'scripts/demo.ts',
      '--worker-port',
      '0',
      '--approval-port',
      '0',
    ],
    {
      cwd: root,
      env: { ...process.env, CI: 'true', REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 80_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

it('runs the payments-failover runbook end to end and prints what ran, what was refused and what needs a person', async () => {
  const { code, stdout, stderr } = await runDemo();
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });

  const summary = stdout.slice(stdout.indexOf('──── Summary'));
  const section = (title: string) => {
    const start = summary.indexOf(title);
    const rest = summary.slice(start + title.length);
    const end = rest.search(/\n(What|Infrastructure)/);
    return rest
      .slice(0, end)
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
  };
  // The payments-failover runbook: check → restart and scale in parallel (the refused scale's denied edge re-checks)
  // → a gate → the manual-only delete.
  expect(section('What ran')).toEqual([
    '✓ get_service_status {"service":"payments"} — by policy (auto)',
    '✓ restart_service {"service":"payments"} — approved by carol, dave',
    '✓ get_service_status {"service":"payments"} — by policy (auto)',
    expect.stringMatching(
      /^✓ runbook_gate \{"runbook":"payments-failover","node":"cleanup-gate",.*— approved by bob$/,
    ),
  ]);
  expect(section('What was refused')).toEqual([
    expect.stringMatching(
      /^✗ scale_service \{"service":"payments","replicas":6\} — denied by carol: "no capacity changes/,
    ),
  ]);
  expect(section('What needs a person')).toEqual([
    expect.stringMatching(/^⚠ delete_volume \{"volume":"scratch"\} — manual_only/),
  ]);
  expect(summary).toMatch(/payments healthy ×2 \(1 restart\)/);
  expect(summary).toMatch(/volumes pg-data, scratch/);
  expect(summary).toMatch(/entries in \d+ chains \(one per writer\), hash chains intact/);
  expect(stdout).toContain('✔ The demo ended as expected.');

  // Progress: the inbox, the approval links as requests arrived, the run parking and resuming.
  expect(stdout).toMatch(/web inbox: http:\/\/127\.0\.0\.1:\d+\/inbox/);
  expect(stdout).toMatch(/email to (carol|dave)@example\.test: http:\/\/127\.0\.0\.1:\d+\/approve\//);
  expect(stdout).toContain('⏸ run parked in Redis');
  // The graph: restart and scale asked in one turn, each step's transitions, and the step on each request.
  expect(stdout).toContain('runbook payments-failover');
  expect(stdout).toMatch(
    /◆ step mitigate\/restart: running[\s\S]*◆ step mitigate\/scale: running[\s\S]*⏸ restart_service/,
  );
  const restart =
    /approval request (\S+) for call rb\.mitigate\.restart@1 \(step 3 of 7 of payments-failover\)/.exec(
      stdout,
    );
  expect(restart).not.toBeNull();
  // Addressed by request ID (call IDs repeat across runs), one command per approver the quorum of two needs.
  const commands =
    stdout.match(new RegExp(`CLI \\((\\w+)\\): npx countersign approve ${restart![1]} `, 'g')) ?? [];
  expect(commands.map((line) => /\((\w+)\)/.exec(line)![1]).sort()).toEqual(['carol', 'dave']);
  expect(stdout).toContain('◆ step mitigate/scale: refused');
  expect(stdout).toMatch(
    /approval request \S+ for call rb\.cleanup-gate@1 \(step 6 of 7 of payments-failover\)/,
  );
  expect(stdout).toContain('◆ step delete: done');
  expect(stdout).toContain('▶ run resumed');
});

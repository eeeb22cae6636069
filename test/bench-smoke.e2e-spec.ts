// Smoke test of `npm run bench`: the quick mode runs every phase end to end as a child process and writes a
// results file with sane, positive figures. It never asserts on timing targets (they need a quiet machine).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

function runBench(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'bench/bench.ts', ...args],
      { cwd: ROOT, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe('npm run bench --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every phase and writes positive figures to the results file', async () => {
    const out = join(dir, 'results.json');
    const { code, output } = await runBench(['--quick', '--runs', '50', '--parked', '2000', '--out', out]);
    if (code !== 0) throw new Error(`bench exited ${code}:\n${output.slice(-4_000)}`);

    const results = JSON.parse(readFileSync(out, 'utf8'));
    const positive = expect.any(Number);
    expect(results.machine).toMatchObject({ cores: positive, node: process.version });
    expect(results.machine.redis).toMatch(/^\d+\.\d+/);
    for (const phase of [results.roundTrip, results.floor]) {
      expect(phase.runs).toBe(50);
      expect(phase.runsPerSecond).toBeGreaterThan(0);
      expect(phase.decisionToExecution.count).toBe(50);
      expect(phase.decisionToExecution.p50Ms).toBeGreaterThan(0);
      expect(phase.decisionToExecution.p99Ms).toBeGreaterThanOrEqual(phase.decisionToExecution.p50Ms);
    }
    expect(results.roundTrip).toMatchObject({ completed: 50, failed: 0, decisionErrors: 0 });
    expect(results.ratios.throughput).toBeGreaterThan(0);
    expect(results.ratios.p99).toBeGreaterThan(0);
    expect(results.scaleOut).toEqual([expect.objectContaining({ workers: 1, runsPerSecond: positive })]);
    // INFO used_memory moves with everything else on a shared Redis; MEMORY USAGE of our own keys does not.
    expect(results.parked.runs).toBe(2000);
    expect(Number.isFinite(results.parked.infoBytesPerRun)).toBe(true);
    expect(results.parked.stateBytesPerRun).toBeGreaterThan(100);
    expect(results.parked.breakdown['run hash'].keys).toBe(2000);
    expect(results.parked.breakdown['approval-request job hash'].keys).toBe(2000);
    expect(results.autoOverhead.perCallThroughWorkerMs).toBeGreaterThan(0);
    expect(results.autoOverhead.directPerCallMs).toBeGreaterThan(0);
    expect(results.mcpOverhead.perCallThroughWorkerMs).toBeGreaterThan(0);
    expect(results.mcpOverhead.directPerCallMs).toBeGreaterThan(0);
    expect(Object.keys(results.targets)).toEqual(['throughput', 'p99', 'parkedMemory', 'mcpOverhead']);
    expect(output).toContain('measurement');
  }, 300_000);
});

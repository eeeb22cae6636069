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

  it('runs every phase, prints both floors and every verdict, and writes positive figures to the results file', async () => {
    const out = join(dir, 'results.json');
    const { code, output } = await runBench(['--quick', '--runs', '50', '--parked', '2000', '--out', out]);
    if (code !== 0) throw new Error(`bench exited ${code}:\n${output.slice(-4_000)}`);

    const results = JSON.parse(readFileSync(out, 'utf8'));
    const positive = expect.any(Number);
    expect(results.machine).toMatchObject({ cores: positive, node: process.version });
    expect(results.machine.redis).toMatch(/^\d+\.\d+/);
    for (const phase of [results.roundTrip, results.floor, results.contractFloor]) {
      expect(phase.runs).toBe(50);
      expect(phase.runsPerSecond).toBeGreaterThan(0);
      expect(phase.decisionToExecution.count).toBe(50);
      expect(phase.decisionToExecution.p50Ms).toBeGreaterThan(0);
      expect(phase.decisionToExecution.p99Ms).toBeGreaterThanOrEqual(phase.decisionToExecution.p50Ms);
    }
    expect(results.roundTrip).toMatchObject({ completed: 50, failed: 0, decisionErrors: 0 });
    // The contract floor went through its HTTP doors and SSE stream: every decision POST answered, none failed.
    expect(results.contractFloor).toMatchObject({ completed: 50, failed: 0, decisionErrors: 0 });
    expect(results.contractFloor.decisionPost.count).toBe(50);
    for (const ratios of [results.ratios, results.bareFloorRatios]) {
      expect(ratios.throughput).toBeGreaterThan(0);
      expect(ratios.p99).toBeGreaterThan(0);
    }
    expect(results.pairs[0].throughputRatio).toBeCloseTo(
      results.roundTrip.runsPerSecond / results.contractFloor.runsPerSecond,
    );
    // The round trip on a one-master and a three-master cluster: all runs done, every master's share counted.
    expect(results.cluster.map((c: { masters: number }) => c.masters)).toEqual([1, 3]);
    for (const c of results.cluster) {
      expect(c.result).toMatchObject({ runs: 50, completed: 50, failed: 0, decisionErrors: 0 });
      expect(c.commandShares).toHaveLength(c.masters);
      const total = c.commandShares.reduce((sum: number, m: { share: number }) => sum + m.share, 0);
      expect(total).toBeCloseTo(1);
    }
    expect(results.cluster[1].commandShares.every((m: { share: number }) => m.share > 0)).toBe(true);
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
    expect(results.gatewayOverhead.gatewayPerCallMs).toBeGreaterThan(0);
    expect(results.gatewayOverhead.directPerCallMs).toBeGreaterThan(0);
    expect(Object.keys(results.targets)).toEqual([
      'throughput',
      'p99',
      'parkedMemory',
      'autoOverhead',
      'mcpOverhead',
      'gatewayOverhead',
    ]);
    expect(output).toContain('measurement');
    // Both floors and each target's verdict are printed (the verdict itself depends on the machine).
    expect(output).toMatch(/^floor: bare BullMQ \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^floor: contract \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^throughput Countersign \/ bare floor +\| [\d.]+%/m);
    expect(output).toMatch(
      /^throughput Countersign \/ contract floor +\| [\d.]+% +\| (PASS|MISS) \(≥ 70% of the contract floor\)/m,
    );
    expect(output).toMatch(
      /^p99 Countersign \/ contract floor +\| [\d.]+× +\| (PASS|MISS) \(≤ 2× the contract floor\)/m,
    );
    expect(output).toMatch(/^ {2}overhead per auto call +\| [\d.]+ ms\/call +\| (PASS|MISS) \(≤ 50 µs/m);
    expect(output).toMatch(/^round trips on Redis Cluster, 3 masters \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^ {2}share of commands per master +\| \d+% \/ \d+% \/ \d+%/m);
  }, 300_000);
});

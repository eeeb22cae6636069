// Smoke test of `npm run bench`: the quick mode runs every phase end to end as a child process and writes a
// results file with sane, positive figures — the CPU per round trip of every process, commands and bytes, the open
// loop, the sequential trips, the peers. It never asserts on timing targets (they need a quiet machine). Also: `--help`
// of each bench script starts no work, and a Redis the bench cannot reach is one line and exit code 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

function runScript(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  timeout = 420_000,
): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', script, ...args],
      { cwd: ROOT, timeout, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}
const runBench = (args: string[], env?: Record<string, string>) => runScript('bench/bench.ts', args, env);

/** A phase's cost figures, as the results file holds them. */
interface Cost {
  cpuMsPerRun: Record<string, number>;
  redisCommandsPerRun: { total: number };
  redisBytesPerRun: { in: number; out: number };
}

function expectCostOf(phase: Cost, roles: string[]): void {
  for (const role of [...roles, 'redis', 'driver', 'total'])
    expect(phase.cpuMsPerRun[role]).toBeGreaterThan(0);
  const sum = [...roles, 'redis', 'driver'].reduce((total, role) => total + phase.cpuMsPerRun[role], 0);
  expect(phase.cpuMsPerRun.total).toBeCloseTo(sum);
  expect(phase.redisCommandsPerRun.total).toBeGreaterThan(0);
  expect(phase.redisBytesPerRun.in).toBeGreaterThan(0);
  expect(phase.redisBytesPerRun.out).toBeGreaterThan(0);
}

describe('npm run bench --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every phase, prints the CPU table, both floors, the peers and every verdict, and writes positive figures to the results file', async () => {
    const out = join(dir, 'results.json');
    const { code, output } = await runBench([
      '--quick',
      '--peers',
      '--runs',
      '50',
      '--parked',
      '2000',
      '--out',
      out,
    ]);
    if (code !== 0) throw new Error(`bench exited ${code}:\n${output.slice(-4_000)}`);

    const results = JSON.parse(readFileSync(out, 'utf8'));
    const positive = expect.any(Number);
    expect(results.machine).toMatchObject({ cores: positive, node: process.version });
    expect(results.machine.redis).toMatch(/^\d+\.\d+/);
    expect(results.redis).toMatchObject({
      cpuRead: true,
      measuredOn: expect.stringMatching(/^private redis-server/),
    });
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

    // CPU by process (each role > 0, the total their sum), commands and bytes, for Countersign and both floors.
    expectCostOf(results.roundTrip, ['worker', 'approval']);
    expectCostOf(results.floor, ['worker']);
    expectCostOf(results.contractFloor, ['worker', 'approval']);
    expect(results.floor.cpuMsPerRun.approval).toBeUndefined();
    expect(results.cpu.clockTicksPerSecond).toBeGreaterThan(0);
    for (const key of ['throughput', 'p99', 'cpuTotal', 'redisCpu', 'redisCommands', 'redisBytes']) {
      expect(results.ratios[key]).toBeGreaterThan(0);
      expect(results.bareFloorRatios[key]).toBeGreaterThan(0);
    }
    // One pair: each ratio is that pair's.
    expect(results.pairs).toHaveLength(1);
    expect(results.pairs[0].vsContractFloor.throughput).toBeCloseTo(
      results.roundTrip.runsPerSecond / results.contractFloor.runsPerSecond,
    );
    expect(results.ratios.cpuTotal).toBeCloseTo(
      results.roundTrip.cpuMsPerRun.total / results.contractFloor.cpuMsPerRun.total,
    );

    // The peers ran (LangGraph only where a PostgreSQL answers: otherwise a printed note says it was skipped).
    const openAi = results.peers['openai-agents'];
    expect(openAi).toMatchObject({ runs: 50, failed: 0 });
    expect(openAi.decisionToExecution.count).toBe(50);
    expectCostOf(openAi, ['worker']);
    expect(results.peerRatios['openai-agents'].cpuTotal).toBeGreaterThan(0);
    const langGraph = results.peers.langgraph;
    if ('skipped' in langGraph) {
      expect(output).toContain(`LangGraph peer skipped: ${langGraph.skipped}`);
    } else {
      expect(langGraph).toMatchObject({ runs: 50, failed: 0 });
      expectCostOf(langGraph, ['worker', 'postgres']);
      expect(output).toMatch(
        /^LangGraph\.js 1\.7.* \| +[\d.]+ \| +— \| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +[\d.]+ ms \|/m,
      );
    }

    // The open loop at both rates (1 s of starts each in --quick), for Countersign and the contract floor.
    expect(results.openLoop.map((o: { ratePerSecond: number }) => o.ratePerSecond)).toEqual([50, 200]);
    for (const o of results.openLoop) {
      expect(o.runs).toBe(o.ratePerSecond);
      for (const side of [o.countersign, o.contractFloor]) {
        expect(side.decisionToExecution.count).toBe(o.runs);
        expect(side.decisionToExecution.p99Ms).toBeGreaterThan(0);
        expect(side.failed).toBe(0);
      }
      expect(o.p99Ratio).toBeCloseTo(
        o.countersign.decisionToExecution.p99Ms / o.contractFloor.decisionToExecution.p99Ms,
      );
    }
    // Sequential trips under MONITOR: the contract floor's decision path is one queue add and the fetch of its job.
    expect(results.trips.countersign.decisionToTool.trips).toBeGreaterThan(0);
    expect(results.trips.contractFloor.decisionToTool.trips).toBeGreaterThan(0);
    expect(results.trips.countersign.wholeRun.trips).toBeGreaterThan(
      results.trips.contractFloor.wholeRun.trips,
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
    expect(results.autoOverhead.workerCpuPerCallMs).toEqual(expect.any(Number));
    expect(results.autoOverhead.redisCommandsPerCall).toBeGreaterThan(0);
    // The before-hook was asked once per call: a warm-up run and --quick's 3 repeats of 100 calls.
    expect(results.hookOverhead.hookRequests).toBe(400);
    expect(results.hookOverhead.withHook.perCallThroughWorkerMs).toBeGreaterThan(0);
    expect(results.hookOverhead.hookPerCallMs).toEqual(expect.any(Number));
    expect(results.hookOverhead.hookWorkerCpuPerCallMs).toEqual(expect.any(Number));
    expect(output).toMatch(/cost of the hook per call +\| +-?[\d.]+ ms\/call/);
    // The same auto calls with a Cedar set of 50 policies in RBAC's place (issue 28), printed beside them.
    expect(results.cedarOverhead.perCallThroughWorkerMs).toBeGreaterThan(0);
    expect(output).toMatch(/^ {2}overhead per auto call with Cedar +\| +-?[\d.]+ (ms|µs)\/call/m);
    expect(results.mcpOverhead.perCallThroughWorkerMs).toBeGreaterThan(0);
    expect(results.mcpOverhead.directPerCallMs).toBeGreaterThan(0);
    expect(results.gatewayOverhead.gatewayPerCallMs).toBeGreaterThan(0);
    expect(results.gatewayOverhead.directPerCallMs).toBeGreaterThan(0);
    expect(Object.keys(results.targets)).toEqual([
      'cpuPerRoundTrip',
      'redisCpu',
      'redisCommands',
      'redisBytes',
      'openLoopP99At50',
      'openLoopP99At200',
      'decisionTrips',
      'parkedMemory',
      'autoOverhead',
      'mcpOverhead',
      'gatewayWork',
    ]);
    // Every target was measured on this run: PASS or MISS, never n/a.
    for (const target of Object.values(results.targets) as { pass: boolean | null }[])
      expect(typeof target.pass).toBe('boolean');

    // The CPU table: ms by process, total, commands and bytes per round trip, for Countersign and both floors.
    expect(output).toMatch(
      /^per approval round trip +\| worker \| approval svc \| Redis \| Postgres \| driver \| +total \| Redis commands \| bytes to Redis$/m,
    );
    expect(output).toMatch(
      /^Countersign +\| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +— \| +[\d.]+ \| +[\d.]+ ms \| +[\d.]+ \| +[\d.]+ KB$/m,
    );
    expect(output).toMatch(
      /^bare floor +\| +[\d.]+ \| +— \| +[\d.]+ \| +— \| +[\d.]+ \| +[\d.]+ ms \| +[\d.]+ \| +[\d.]+ KB$/m,
    );
    expect(output).toMatch(
      /^contract floor +\| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +— \| +[\d.]+ \| +[\d.]+ ms \|/m,
    );
    expect(output).toMatch(
      /^OpenAI Agents SDK 0\.20.* \| +[\d.]+ \| +— \| +[\d.]+ \| +— \| +[\d.]+ \| +[\d.]+ ms \|/m,
    );
    // Each target's verdict is printed (the verdict itself depends on the machine).
    // `label` is a pattern (its leading spaces as ` {2}`); `target` is the start of the target's text, taken literally.
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const verdict = (label: string, target: string) =>
      new RegExp(`^${label} +\\| [\\d.]+× +\\| (PASS|MISS) \\(${literal(target)}`, 'm');
    expect(output).toMatch(
      verdict(
        'CPU per round trip Countersign / contract floor',
        "CPU per round trip, every process ≤ 2× the contract floor's",
      ),
    );
    expect(output).toMatch(verdict(' {2}Redis CPU per round trip', 'Redis CPU per round trip ≤ 1.5×'));
    expect(output).toMatch(
      verdict(' {2}Redis commands per round trip', 'Redis commands per round trip ≤ 1.3×'),
    );
    expect(output).toMatch(
      verdict(' {2}bytes to Redis per round trip', 'bytes to Redis per round trip ≤ 1.5×'),
    );
    expect(output).toMatch(
      verdict(' {2}p99 Countersign / contract floor', 'decision → tool p99 at 50 runs/s'),
    );
    expect(output).toMatch(
      verdict(' {2}p99 Countersign / contract floor', 'decision → tool p99 at 200 runs/s'),
    );
    expect(output).toMatch(
      /^sequential Redis trips, decision → tool \(MONITOR\) +\| \d+ +\| (PASS|MISS) \(≤ 6 sequential Redis trips/m,
    );
    expect(output).toMatch(/^floor: bare BullMQ \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^floor: contract \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^throughput Countersign \/ contract floor +\| [\d.]+% +\| shown, not judged/m);
    expect(output).toMatch(/^ {2}overhead per auto call +\| [\d.]+ ms\/call +\| (PASS|MISS) \(≤ 50 µs/m);
    expect(output).toMatch(
      /^ {4}of which the gateway’s own work +\| -?[\d.]+ ms\/call +\| (PASS|MISS) \(< 1 ms above a bare SDK proxy\)/m,
    );
    expect(output).toMatch(/^round trips on Redis Cluster, 3 masters \(N=50\) +\| \d+ runs\/s/m);
    expect(output).toMatch(/^ {2}share of commands per master +\| \d+% \/ \d+% \/ \d+%/m);
  }, 450_000);
});

describe('the bench scripts at the door', () => {
  it.each([
    ['bench/bench.ts', /^Usage: npm run bench \[/],
    ['bench/monitor-round-trip.ts', /^Usage: npm run bench:monitor/],
    ['bench/policy.bench.ts', /^Usage: npm run bench:policy/],
  ])(
    '%s --help prints its usage and exits 0, starting nothing',
    async (script, usage) => {
      // A Redis that is not there and a redis-server that does not exist: --help must not need either.
      const { code, output } = await runScript(
        script,
        ['--help'],
        { REDIS_SERVER_BIN: '/nonexistent/redis-server' },
        60_000,
      );
      expect(code).toBe(0);
      expect(output).toMatch(usage);
      expect(output).toContain('--help');
      expect(output).not.toMatch(/^\[(bench|monitor)\]/m);
    },
    90_000,
  );

  it('answers an unreachable --redis-url with one line and exit code 2', async () => {
    const { code, output } = await runBench(['--quick', '--redis-url', 'redis://127.0.0.1:1']);
    expect(code).toBe(2);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^\[bench\] Redis at redis:\/\/127\.0\.0\.1:1 is unreachable \(connect ECONNREFUSED/,
      ),
    ]);
  }, 90_000);

  it.each([
    ['bench/bench.ts', '[bench]'],
    ['bench/monitor-round-trip.ts', '[monitor]'],
  ])(
    '%s says in one line, exit code 2, that there is no redis-server to start',
    async (script, tag) => {
      const { code, output } = await runScript(
        script,
        script.endsWith('bench.ts') ? ['--quick'] : [],
        { REDIS_SERVER_BIN: '/nonexistent/redis-server' },
        60_000,
      );
      expect(code).toBe(2);
      expect(output.trim().split('\n')).toEqual([
        expect.stringContaining(`${tag} no redis-server to start (/nonexistent/redis-server does not run`),
      ]);
    },
    90_000,
  );

  it('refuses an unknown flag by name, exit code 2', async () => {
    const { code, output } = await runBench(['--quick', '--pears']);
    expect(code).toBe(2);
    expect(output.trim()).toBe('[bench] unknown argument "--pears" (--help lists them)');
  }, 90_000);
});

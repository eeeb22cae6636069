// Targets of issue #6 (and the MCP overhead target of issue 14) and the one summary table the bench prints.
import type { AutoOverheadResult } from './phases/auto-overhead';
import type { FloorResult } from './phases/floor';
import type { ParkedResult } from './phases/parked';
import type { RoundTripResult } from './phases/round-trip';
import type { Machine } from './support/measure';

export const TARGETS = {
  throughputVsFloor: 0.5,
  p99VsFloor: 2,
  bytesPerParkedRun: 2048,
  mcpOverheadMs: 1,
};

export interface Target {
  target: string;
  measured: string;
  pass: boolean;
}

/** One round-trip phase and the floor phase measured right after it. */
export interface Pair {
  roundTrip: RoundTripResult;
  floor: FloorResult;
}

const throughputRatioOf = (p: Pair) => p.roundTrip.runsPerSecond / p.floor.runsPerSecond;
const p99RatioOf = (p: Pair) => p.roundTrip.decisionToExecution.p99Ms / p.floor.decisionToExecution.p99Ms;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The pair whose throughput ratio is the median (the lower middle one for an even count): shown in full. */
export function medianPair(pairs: Pair[]): Pair {
  const sorted = [...pairs].sort((a, b) => throughputRatioOf(a) - throughputRatioOf(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function summarizePair(p: Pair) {
  return {
    runsPerSecond: p.roundTrip.runsPerSecond,
    floorRunsPerSecond: p.floor.runsPerSecond,
    p99Ms: p.roundTrip.decisionToExecution.p99Ms,
    floorP99Ms: p.floor.decisionToExecution.p99Ms,
    throughputRatio: throughputRatioOf(p),
    p99Ratio: p99RatioOf(p),
  };
}

/** Targets judged on the median ratios over the pairs. */
export function verdicts(pairs: Pair[], parked: ParkedResult, mcp: AutoOverheadResult) {
  const throughputRatio = median(pairs.map(throughputRatioOf));
  const p99Ratio = median(pairs.map(p99RatioOf));
  const targets: Record<string, Target> = {
    throughput: {
      target: `≥ ${TARGETS.throughputVsFloor * 100}% of the floor`,
      measured: `${(throughputRatio * 100).toFixed(1)}%`,
      pass: throughputRatio >= TARGETS.throughputVsFloor,
    },
    p99: {
      target: `≤ ${TARGETS.p99VsFloor}× the floor`,
      measured: `${p99Ratio.toFixed(2)}×`,
      pass: p99Ratio <= TARGETS.p99VsFloor,
    },
    parkedMemory: {
      target: `< ${TARGETS.bytesPerParkedRun} B per parked run`,
      measured: `${Math.round(parked.infoBytesPerRun)} B`,
      pass: parked.infoBytesPerRun < TARGETS.bytesPerParkedRun,
    },
    mcpOverhead: {
      target: `< ${TARGETS.mcpOverheadMs} ms per auto MCP call above calling the server directly`,
      measured: `${mcp.overheadPerCallMs.toFixed(2)} ms`,
      pass: mcp.overheadPerCallMs < TARGETS.mcpOverheadMs,
    },
  };
  return { ratios: { throughput: throughputRatio, p99: p99Ratio }, targets };
}

interface Printable {
  timestamp: string;
  machine: Machine & { loadAverage1mAtEnd: number };
  options: { runs: number; parked: number; concurrency: number; workerConcurrency: number; logLevel: string };
  roundTrip: RoundTripResult;
  floor: FloorResult;
  ratios: { throughput: number; p99: number };
  targets: Record<string, Target>;
  pairs: ReturnType<typeof summarizePair>[];
  scaleOut: { workers: number; runsPerSecond: number; decisionToExecution: { p99Ms: number } }[];
  parked: ParkedResult & { measuredOn: { redis: string; composeSettings?: string[] } };
  autoOverhead: AutoOverheadResult;
  mcpOverhead: AutoOverheadResult;
}

const ms = (v: number) => `${v.toFixed(2)} ms`;
const rate = (v: number) => `${v.toFixed(0)} runs/s`;
const top = (perCommand: Record<string, number>) =>
  Object.entries(perCommand)
    .slice(0, 5)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
const verdict = (t: Target) => (t.pass ? 'PASS' : 'MISS');

export function printTable(r: Printable): void {
  const rt = r.roundTrip;
  const fl = r.floor;
  const d = rt.decisionToExecution;
  const f = fl.decisionToExecution;
  const rows: [string, string, string][] = [
    [
      `round trips (1 worker, N=${rt.runs})`,
      rate(rt.runsPerSecond),
      `${rt.failed} failed${r.pairs.length > 1 ? `; the median of ${r.pairs.length} pairs` : ''}`,
    ],
    [
      '  decision → tool runs p50 / p95 / p99',
      `${ms(d.p50Ms)} / ${ms(d.p95Ms)} / ${ms(d.p99Ms)}`,
      `max ${ms(d.maxMs)}`,
    ],
    ['  decision POST p50 / p99', `${ms(rt.decisionPost.p50Ms)} / ${ms(rt.decisionPost.p99Ms)}`, ''],
    [
      '  Redis commands per run (all clients)',
      `${rt.redisCommandsPerRun.total}`,
      top(rt.redisCommandsPerRun.perCommand),
    ],
    [`floor: bare BullMQ (N=${fl.runs})`, rate(fl.runsPerSecond), ''],
    [
      '  decision → resume p50 / p95 / p99',
      `${ms(f.p50Ms)} / ${ms(f.p95Ms)} / ${ms(f.p99Ms)}`,
      `max ${ms(f.maxMs)}`,
    ],
    [
      '  Redis commands per run (all clients)',
      `${fl.redisCommandsPerRun.total}`,
      top(fl.redisCommandsPerRun.perCommand),
    ],
    [
      `throughput Countersign / floor${r.pairs.length > 1 ? ' (median)' : ''}`,
      r.targets.throughput.measured,
      `${verdict(r.targets.throughput)} (${r.targets.throughput.target})`,
    ],
    [
      `p99 Countersign / floor${r.pairs.length > 1 ? ' (median)' : ''}`,
      r.targets.p99.measured,
      `${verdict(r.targets.p99)} (${r.targets.p99.target})`,
    ],
    ...(r.pairs.length > 1
      ? [
          [
            '  each pair: throughput / p99 ratio',
            r.pairs
              .map((p) => `${(p.throughputRatio * 100).toFixed(0)}% / ${p.p99Ratio.toFixed(1)}×`)
              .join(', '),
            'round trip then floor, back to back',
          ] as [string, string, string],
        ]
      : []),
    ...r.scaleOut.map((s): [string, string, string] => [
      `scale-out: ${s.workers} worker process${s.workers > 1 ? 'es' : ''}`,
      rate(s.runsPerSecond),
      `p99 ${ms(s.decisionToExecution.p99Ms)}`,
    ]),
    [
      `parked runs at rest (N=${r.parked.runs.toLocaleString('en-US')})`,
      `${Math.round(r.parked.infoBytesPerRun)} B/run`,
      `${verdict(r.targets.parkedMemory)} (${r.targets.parkedMemory.target}, INFO used_memory)`,
    ],
    [
      '  measured on',
      r.parked.measuredOn.redis.startsWith('private') ? 'private redis-server' : 'shared Redis',
      r.parked.measuredOn.composeSettings?.join(' ') ?? 'its own settings; other clients count',
    ],
    ['  run state + request jobs (MEMORY USAGE)', `${Math.round(r.parked.stateBytesPerRun)} B/run`, ''],
    ...Object.entries(r.parked.breakdown)
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .map(([name, c]): [string, string, string] => [
        `    ${name}`,
        `${c.bytesPerRun.toFixed(0)} B/run`,
        `${c.keys} keys`,
      ]),
    ['  parking rate', `${r.parked.parkedPerSecond.toFixed(0)} runs/s`, 'approval service not consuming'],
    [
      `auto tier: ${r.autoOverhead.calls} calls through the worker`,
      `${ms(r.autoOverhead.perCallThroughWorkerMs)}/call`,
      `run ${ms(r.autoOverhead.runWithCallsMs)} − empty run ${ms(r.autoOverhead.emptyRunMs)}`,
    ],
    ['  same handler called directly', `${ms(r.autoOverhead.directPerCallMs)}/call`, ''],
    [
      '  overhead per auto call',
      `${ms(r.autoOverhead.overheadPerCallMs)}/call`,
      `median of ${r.autoOverhead.repeats}`,
    ],
    [
      `auto MCP tool: ${r.mcpOverhead.calls} calls through the worker`,
      `${ms(r.mcpOverhead.perCallThroughWorkerMs)}/call`,
      `run ${ms(r.mcpOverhead.runWithCallsMs)} − empty run ${ms(r.mcpOverhead.emptyRunMs)}`,
    ],
    [
      '  same MCP server called directly',
      `${ms(r.mcpOverhead.directPerCallMs)}/call`,
      'an MCP client of the bench',
    ],
    [
      '  overhead per auto MCP call',
      `${ms(r.mcpOverhead.overheadPerCallMs)}/call`,
      `${verdict(r.targets.mcpOverhead)} (< ${TARGETS.mcpOverheadMs} ms); median of ${r.mcpOverhead.repeats}`,
    ],
  ];
  const w0 = Math.max(...rows.map((row) => row[0].length));
  const w1 = Math.max(...rows.map((row) => row[1].length));
  const m = r.machine;
  console.log('');
  console.log(
    `Countersign benchmark ${r.timestamp} — ${m.cores} × ${m.cpuModel}, node ${m.node}, redis ${m.redis}, ` +
      `load ${m.loadAverage1mAtStart} → ${m.loadAverage1mAtEnd}; concurrency ${r.options.concurrency}, ` +
      `worker concurrency ${r.options.workerConcurrency}, LOG_LEVEL=${r.options.logLevel}`,
  );
  console.log(`${'measurement'.padEnd(w0)} | ${'value'.padEnd(w1)} | note`);
  console.log(`${'-'.repeat(w0)}-|-${'-'.repeat(w1)}-|-${'-'.repeat(40)}`);
  for (const [name, value, note] of rows) console.log(`${name.padEnd(w0)} | ${value.padEnd(w1)} | ${note}`);
  console.log('');
}

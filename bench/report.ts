// Targets of issue 18 (throughput and p99 against the contract floor; parked-run memory and the auto-tier overhead
// kept from issue #6), the MCP overhead targets of issue 14 (through the worker, through the gateway), and the one
// summary table the bench prints.
import type { AutoOverheadResult } from './phases/auto-overhead';
import type { FloorResult } from './phases/floor';
import type { GatewayOverheadResult } from './phases/gateway-overhead';
import type { ParkedResult } from './phases/parked';
import type { RoundTripResult } from './phases/round-trip';
import type { Machine } from './support/measure';

export const TARGETS = {
  /** Against the contract floor (bare BullMQ plus the contract's HTTP and SSE hops); the bare floor is shown as the limit. */
  throughputVsFloor: 0.7,
  p99VsFloor: 2,
  bytesPerParkedRun: 2048,
  autoOverheadMs: 0.05,
  mcpOverheadMs: 1,
  gatewayOverheadMs: 1,
};

export interface Target {
  target: string;
  measured: string;
  pass: boolean;
}

/** One round-trip phase and the two floor phases measured right after it (a "pair" of round trip and floors). */
export interface Pair {
  roundTrip: RoundTripResult;
  floor: FloorResult;
  contractFloor: RoundTripResult;
}

type FloorOf = (p: Pair) => { runsPerSecond: number; decisionToExecution: { p99Ms: number } };
const bare: FloorOf = (p) => p.floor;
const contract: FloorOf = (p) => p.contractFloor;
const throughputRatioOf = (p: Pair, of: FloorOf = contract) =>
  p.roundTrip.runsPerSecond / of(p).runsPerSecond;
const p99RatioOf = (p: Pair, of: FloorOf = contract) =>
  p.roundTrip.decisionToExecution.p99Ms / of(p).decisionToExecution.p99Ms;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The pair whose throughput ratio to the contract floor is the median (the lower middle one for an even count): shown in full. */
export function medianPair(pairs: Pair[]): Pair {
  const sorted = [...pairs].sort((a, b) => throughputRatioOf(a) - throughputRatioOf(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function summarizePair(p: Pair) {
  return {
    runsPerSecond: p.roundTrip.runsPerSecond,
    floorRunsPerSecond: p.floor.runsPerSecond,
    contractFloorRunsPerSecond: p.contractFloor.runsPerSecond,
    p99Ms: p.roundTrip.decisionToExecution.p99Ms,
    floorP99Ms: p.floor.decisionToExecution.p99Ms,
    contractFloorP99Ms: p.contractFloor.decisionToExecution.p99Ms,
    throughputRatio: throughputRatioOf(p),
    p99Ratio: p99RatioOf(p),
    bareThroughputRatio: throughputRatioOf(p, bare),
    bareP99Ratio: p99RatioOf(p, bare),
  };
}

/** Targets judged on the median ratios over the pairs. */
export function verdicts(
  pairs: Pair[],
  parked: ParkedResult,
  auto: AutoOverheadResult,
  mcp: AutoOverheadResult,
  gateway: GatewayOverheadResult,
) {
  const throughputRatio = median(pairs.map((p) => throughputRatioOf(p)));
  const p99Ratio = median(pairs.map((p) => p99RatioOf(p)));
  const bareRatios = {
    throughput: median(pairs.map((p) => throughputRatioOf(p, bare))),
    p99: median(pairs.map((p) => p99RatioOf(p, bare))),
  };
  const targets: Record<string, Target> = {
    throughput: {
      target: `≥ ${TARGETS.throughputVsFloor * 100}% of the contract floor`,
      measured: `${(throughputRatio * 100).toFixed(1)}%`,
      pass: throughputRatio >= TARGETS.throughputVsFloor,
    },
    p99: {
      target: `≤ ${TARGETS.p99VsFloor}× the contract floor`,
      measured: `${p99Ratio.toFixed(2)}×`,
      pass: p99Ratio <= TARGETS.p99VsFloor,
    },
    parkedMemory: {
      target: `< ${TARGETS.bytesPerParkedRun} B per parked run`,
      measured: `${Math.round(parked.infoBytesPerRun)} B`,
      pass: parked.infoBytesPerRun < TARGETS.bytesPerParkedRun,
    },
    autoOverhead: {
      target: `≤ ${TARGETS.autoOverheadMs * 1000} µs per auto-tier call through the worker above calling it directly`,
      measured: `${(auto.overheadPerCallMs * 1000).toFixed(0)} µs`,
      pass: auto.overheadPerCallMs <= TARGETS.autoOverheadMs,
    },
    mcpOverhead: {
      target: `< ${TARGETS.mcpOverheadMs} ms per auto MCP call above calling the server directly`,
      measured: `${mcp.overheadPerCallMs.toFixed(2)} ms`,
      pass: mcp.overheadPerCallMs < TARGETS.mcpOverheadMs,
    },
    gatewayOverhead: {
      target: `< ${TARGETS.gatewayOverheadMs} ms per auto MCP call through the gateway above calling the server directly`,
      measured: `${gateway.overheadPerCallMs.toFixed(2)} ms`,
      pass: gateway.overheadPerCallMs < TARGETS.gatewayOverheadMs,
    },
  };
  return {
    ratios: { throughput: throughputRatio, p99: p99Ratio },
    bareFloorRatios: bareRatios,
    targets,
  };
}

interface Printable {
  timestamp: string;
  machine: Machine & { loadAverage1mAtEnd: number };
  options: { runs: number; parked: number; concurrency: number; workerConcurrency: number; logLevel: string };
  roundTrip: RoundTripResult;
  floor: FloorResult;
  contractFloor: RoundTripResult;
  ratios: { throughput: number; p99: number };
  bareFloorRatios: { throughput: number; p99: number };
  targets: Record<string, Target>;
  cluster: ClusterRoundTrip[] | { skipped: string };
  pairs: ReturnType<typeof summarizePair>[];
  scaleOut: { workers: number; runsPerSecond: number; decisionToExecution: { p99Ms: number } }[];
  parked: ParkedResult & { measuredOn: { redis: string; composeSettings?: string[] } };
  autoOverhead: AutoOverheadResult;
  mcpOverhead: AutoOverheadResult;
  gatewayOverhead: GatewayOverheadResult;
}

/** The round trip on a local Redis Cluster of `masters` masters, and the share of commands each master served. */
export interface ClusterRoundTrip {
  masters: number;
  result: RoundTripResult;
  /** Per master (its port): fraction of all commands of the phase, INFO commandstats before/after on each. */
  commandShares: { port: number; share: number }[];
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
  const cf = r.contractFloor;
  const c = cf.decisionToExecution;
  const medianNote = r.pairs.length > 1 ? ' (median)' : '';
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
    [`floor: bare BullMQ (N=${fl.runs})`, rate(fl.runsPerSecond), 'the limit: queue hops only'],
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
      `floor: contract (N=${cf.runs})`,
      rate(cf.runsPerSecond),
      'bare BullMQ + POST /runs, SSE push, POST decision (node:http)',
    ],
    [
      '  decision → resume p50 / p95 / p99',
      `${ms(c.p50Ms)} / ${ms(c.p95Ms)} / ${ms(c.p99Ms)}`,
      `max ${ms(c.maxMs)}`,
    ],
    ['  decision POST p50 / p99', `${ms(cf.decisionPost.p50Ms)} / ${ms(cf.decisionPost.p99Ms)}`, ''],
    [
      '  Redis commands per run (all clients)',
      `${cf.redisCommandsPerRun.total}`,
      top(cf.redisCommandsPerRun.perCommand),
    ],
    [
      `throughput Countersign / bare floor${medianNote}`,
      `${(r.bareFloorRatios.throughput * 100).toFixed(1)}%`,
      'shown, not judged (the limit)',
    ],
    [
      `p99 Countersign / bare floor${medianNote}`,
      `${r.bareFloorRatios.p99.toFixed(2)}×`,
      'shown, not judged',
    ],
    [
      `throughput Countersign / contract floor${medianNote}`,
      r.targets.throughput.measured,
      `${verdict(r.targets.throughput)} (${r.targets.throughput.target})`,
    ],
    [
      `p99 Countersign / contract floor${medianNote}`,
      r.targets.p99.measured,
      `${verdict(r.targets.p99)} (${r.targets.p99.target})`,
    ],
    ...(r.pairs.length > 1
      ? [
          [
            '  each pair: vs contract / vs bare (throughput, p99)',
            r.pairs
              .map(
                (p) =>
                  `${(p.throughputRatio * 100).toFixed(0)}% ${p.p99Ratio.toFixed(1)}× / ` +
                  `${(p.bareThroughputRatio * 100).toFixed(0)}% ${p.bareP99Ratio.toFixed(1)}×`,
              )
              .join(', '),
            'round trip, bare floor, contract floor, back to back',
          ] as [string, string, string],
        ]
      : []),
    ...('skipped' in r.cluster
      ? [['round trips on Redis Cluster', 'skipped', r.cluster.skipped] as [string, string, string]]
      : r.cluster.flatMap((k): [string, string, string][] => [
          [
            `round trips on Redis Cluster, ${k.masters} master${k.masters > 1 ? 's' : ''} (N=${k.result.runs})`,
            rate(k.result.runsPerSecond),
            `p99 ${ms(k.result.decisionToExecution.p99Ms)}; ${k.result.failed} failed`,
          ],
          [
            '  share of commands per master',
            k.commandShares.map((m) => `${(m.share * 100).toFixed(0)}%`).join(' / '),
            `${k.result.redisCommandsPerRun.total} commands per run over all masters`,
          ],
        ])),
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
      `${verdict(r.targets.autoOverhead)} (${r.targets.autoOverhead.target}); median of ${r.autoOverhead.repeats}`,
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
    [
      `auto MCP tool: ${r.gatewayOverhead.calls} calls through the MCP gateway`,
      `${ms(r.gatewayOverhead.gatewayPerCallMs)}/call`,
      'one at a time, an MCP client of the bench',
    ],
    ['  same MCP server called directly', `${ms(r.gatewayOverhead.directPerCallMs)}/call`, 'one at a time'],
    [
      '  overhead per call through the gateway',
      `${ms(r.gatewayOverhead.overheadPerCallMs)}/call`,
      `${verdict(r.targets.gatewayOverhead)} (< ${TARGETS.gatewayOverheadMs} ms); median of ${r.gatewayOverhead.repeats}`,
    ],
    [
      '    of which one more MCP hop (bare proxy)',
      `${ms(r.gatewayOverhead.extraHopPerCallMs)}/call`,
      `bare proxy ${ms(r.gatewayOverhead.bareProxyPerCallMs)}/call: the SDK transports, nothing else`,
    ],
    [
      '    of which the gateway’s own work',
      `${ms(r.gatewayOverhead.gatewayWorkPerCallMs)}/call`,
      'gateway − bare proxy',
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

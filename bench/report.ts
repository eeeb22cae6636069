// The targets of issue 27 (CPU per round trip by process, Redis CPU, commands and bytes against the contract floor;
// decision → tool p99 in the open loop; sequential Redis trips on the decision path) and those kept from issues 6, 14
// and 18 (parked-run memory, the auto-tier, MCP and gateway overheads), judged on the medians of the pairs, and the
// tables the bench prints.
import type { AutoOverheadResult } from './phases/auto-overhead';
import type { HookOverheadResult } from './phases/hook-overhead';
import type { FloorResult } from './phases/floor';
import type { GatewayOverheadResult } from './phases/gateway-overhead';
import type { ParkedResult } from './phases/parked';
import type { RoundTripResult } from './phases/round-trip';
import type { PeerName } from './peers/peer-worker';
import type { CpuPerRun, PhaseCost, Role } from './support/cost';
import { median, type LatencySummary, type Machine } from './support/measure';
import type { TripsSummary } from './support/trips';

export const TARGETS = {
  /** CPU of every process per round trip (Redis included) against the contract floor's. */
  cpuVsContractFloor: 2,
  redisCpuVsContractFloor: 1.5,
  redisCommandsVsContractFloor: 1.3,
  redisBytesVsContractFloor: 1.5,
  /** Decision → tool p99 at a fixed open-loop rate, against the contract floor's at the same rate. */
  openLoopP99VsContractFloor: 2,
  /** The open-loop rates the issue judges (runs/s). */
  openLoopRates: [50, 200],
  decisionTrips: 6,
  bytesPerParkedRun: 2048,
  autoOverheadMs: 0.05,
  mcpOverheadMs: 1,
  gatewayWorkMs: 1,
};

export interface Target {
  target: string;
  measured: string;
  /** null: not measured in this run (the reason is in `measured`); `--strict` counts it as a miss. */
  pass: boolean | null;
}

/** One of each round-trip phase, measured back to back: Countersign, the two floors, the peers asked for. */
export interface Pair {
  roundTrip: RoundTripResult;
  floor: FloorResult;
  contractFloor: RoundTripResult;
  peers: Partial<Record<PeerName, FloorResult>>;
}

export const PEER_LABELS: Record<PeerName, string> = {
  langgraph: 'LangGraph.js 1.7, interrupt(), Postgres checkpointer',
  'openai-agents': 'OpenAI Agents SDK 0.20, needsApproval, RunState in Redis',
};

/** Countersign against the contract floor at one open-loop rate, once. */
export interface OpenLoopSample {
  countersign: RoundTripResult;
  contractFloor: RoundTripResult;
}

export interface OpenLoopResult {
  ratePerSecond: number;
  runs: number;
  /** Medians over the samples. */
  countersign: { decisionToExecution: LatencySummary; startLag?: LatencySummary; failed: number };
  contractFloor: { decisionToExecution: LatencySummary; startLag?: LatencySummary; failed: number };
  /** Median of the per-sample p99 ratios (Countersign / contract floor). */
  p99Ratio: number;
  samples: { countersignP99Ms: number; contractFloorP99Ms: number; p99Ratio: number }[];
}

export function summarizeOpenLoop(rate: number, runs: number, samples: OpenLoopSample[]): OpenLoopResult {
  const side = (pick: (s: OpenLoopSample) => RoundTripResult) => ({
    decisionToExecution: medianSummary(samples.map((s) => pick(s).decisionToExecution)),
    startLag: medianSummary(samples.map((s) => pick(s).startLag!)),
    failed: median(samples.map((s) => pick(s).failed)),
  });
  const perSample = samples.map((s) => ({
    countersignP99Ms: s.countersign.decisionToExecution.p99Ms,
    contractFloorP99Ms: s.contractFloor.decisionToExecution.p99Ms,
    p99Ratio: s.countersign.decisionToExecution.p99Ms / s.contractFloor.decisionToExecution.p99Ms,
  }));
  return {
    ratePerSecond: rate,
    runs,
    countersign: side((s) => s.countersign),
    contractFloor: side((s) => s.contractFloor),
    p99Ratio: median(perSample.map((s) => s.p99Ratio)),
    samples: perSample,
  };
}

function medianSummary(summaries: LatencySummary[]): LatencySummary {
  const of = (key: keyof LatencySummary) => median(summaries.map((s) => s[key]));
  return {
    count: of('count'),
    p50Ms: of('p50Ms'),
    p95Ms: of('p95Ms'),
    p99Ms: of('p99Ms'),
    maxMs: of('maxMs'),
    meanMs: of('meanMs'),
  };
}

type Measure = (
  cost: PhaseCost & { runsPerSecond: number; decisionToExecution: LatencySummary },
) => number | null;
const cpuTotal: Measure = (c) => c.cpuMsPerRun?.total ?? null;
const redisCpu: Measure = (c) => c.cpuMsPerRun?.redis ?? null;
const commands: Measure = (c) => c.redisCommandsPerRun.total;
const bytesIn: Measure = (c) => c.redisBytesPerRun.in;
const throughput: Measure = (c) => c.runsPerSecond;
const p99: Measure = (c) => c.decisionToExecution.p99Ms;

/** The median over the pairs of (Countersign's figure / the other phase's); null when either was not measured. */
function ratio(
  pairs: Pair[],
  measure: Measure,
  other: (p: Pair) => FloorResult | RoundTripResult | undefined,
) {
  const ratios: number[] = [];
  for (const p of pairs) {
    const theirs = other(p);
    const a = measure(p.roundTrip);
    const b = theirs ? measure(theirs) : null;
    if (a === null || b === null || !(b > 0)) return null;
    ratios.push(a / b);
  }
  return ratios.length ? median(ratios) : null;
}

export function ratiosAgainst(pairs: Pair[], other: (p: Pair) => FloorResult | RoundTripResult | undefined) {
  return {
    throughput: ratio(pairs, throughput, other),
    p99: ratio(pairs, p99, other),
    cpuTotal: ratio(pairs, cpuTotal, other),
    redisCpu: ratio(pairs, redisCpu, other),
    redisCommands: ratio(pairs, commands, other),
    redisBytes: ratio(pairs, bytesIn, other),
  };
}
export type Ratios = ReturnType<typeof ratiosAgainst>;

export function summarizePair(p: Pair) {
  const one = [p];
  return {
    runsPerSecond: p.roundTrip.runsPerSecond,
    floorRunsPerSecond: p.floor.runsPerSecond,
    contractFloorRunsPerSecond: p.contractFloor.runsPerSecond,
    p99Ms: p.roundTrip.decisionToExecution.p99Ms,
    floorP99Ms: p.floor.decisionToExecution.p99Ms,
    contractFloorP99Ms: p.contractFloor.decisionToExecution.p99Ms,
    cpuMsPerRun: p.roundTrip.cpuMsPerRun?.total ?? null,
    contractFloorCpuMsPerRun: p.contractFloor.cpuMsPerRun?.total ?? null,
    vsContractFloor: ratiosAgainst(one, (q) => q.contractFloor),
    vsBareFloor: ratiosAgainst(one, (q) => q.floor),
  };
}

const times = (v: number) => `${v.toFixed(2)}×`;

/** A ratio target: `measured` ≤ `limit`, or n/a with the reason. */
function atMost(what: string, value: number | null, limit: number, missing: string): Target {
  return value === null
    ? { target: `${what} ≤ ${limit}× the contract floor's`, measured: `n/a (${missing})`, pass: null }
    : { target: `${what} ≤ ${limit}× the contract floor's`, measured: times(value), pass: value <= limit };
}

export interface VerdictInputs {
  pairs: Pair[];
  openLoop: OpenLoopResult[];
  trips: { countersign: TripsSummary } | { skipped: string };
  parked: ParkedResult;
  auto: AutoOverheadResult;
  mcp: AutoOverheadResult;
  gateway: GatewayOverheadResult;
  /** Why Redis's CPU was not read, when it was not (a Redis the bench did not start). */
  redisCpuMissing?: string;
}

/** Every target, judged on the median ratios over the pairs. */
export function verdicts(i: VerdictInputs) {
  const vsContract = ratiosAgainst(i.pairs, (p) => p.contractFloor);
  const cpuMissing = i.redisCpuMissing ?? 'no /proc to read CPU times from';
  const targets: Record<string, Target> = {
    // The target counts every process, Redis included: without Redis's CPU the total is not the figure it judges.
    cpuPerRoundTrip: atMost(
      'CPU per round trip, every process',
      i.redisCpuMissing ? null : vsContract.cpuTotal,
      TARGETS.cpuVsContractFloor,
      cpuMissing,
    ),
    redisCpu: atMost(
      'Redis CPU per round trip',
      vsContract.redisCpu,
      TARGETS.redisCpuVsContractFloor,
      cpuMissing,
    ),
    redisCommands: atMost(
      'Redis commands per round trip',
      vsContract.redisCommands,
      TARGETS.redisCommandsVsContractFloor,
      'not measured',
    ),
    redisBytes: atMost(
      'bytes to Redis per round trip',
      vsContract.redisBytes,
      TARGETS.redisBytesVsContractFloor,
      'not measured',
    ),
  };
  for (const rate of TARGETS.openLoopRates) {
    const measured = i.openLoop.find((o) => o.ratePerSecond === rate);
    targets[`openLoopP99At${rate}`] = atMost(
      `decision → tool p99 at ${rate} runs/s (open loop)`,
      measured?.p99Ratio ?? null,
      TARGETS.openLoopP99VsContractFloor,
      `--open-loop without ${rate}`,
    );
  }
  targets.decisionTrips =
    'skipped' in i.trips
      ? {
          target: `≤ ${TARGETS.decisionTrips} sequential Redis trips from the decision POST to the tool`,
          measured: `n/a (${i.trips.skipped})`,
          pass: null,
        }
      : {
          target: `≤ ${TARGETS.decisionTrips} sequential Redis trips from the decision POST to the tool`,
          measured: `${i.trips.countersign.decisionToTool.trips}`,
          // No trip at all is a count that went wrong (the decision path always has the vote), never a pass.
          pass:
            i.trips.countersign.decisionToTool.trips > 0 &&
            i.trips.countersign.decisionToTool.trips <= TARGETS.decisionTrips,
        };
  Object.assign(targets, {
    parkedMemory: {
      target: `< ${TARGETS.bytesPerParkedRun} B per parked run`,
      measured: `${Math.round(i.parked.infoBytesPerRun)} B`,
      pass: i.parked.infoBytesPerRun < TARGETS.bytesPerParkedRun,
    },
    autoOverhead: {
      target: `≤ ${TARGETS.autoOverheadMs * 1000} µs per auto-tier call through the worker above calling it directly`,
      measured: `${(i.auto.overheadPerCallMs * 1000).toFixed(0)} µs`,
      pass: i.auto.overheadPerCallMs <= TARGETS.autoOverheadMs,
    },
    mcpOverhead: {
      target: `< ${TARGETS.mcpOverheadMs} ms per auto MCP call through the worker above calling the server directly`,
      measured: `${i.mcp.overheadPerCallMs.toFixed(2)} ms`,
      pass: i.mcp.overheadPerCallMs < TARGETS.mcpOverheadMs,
    },
    gatewayWork: {
      target: `< ${TARGETS.gatewayWorkMs} ms per auto MCP call through the gateway above a bare SDK proxy`,
      measured: `${i.gateway.gatewayWorkPerCallMs.toFixed(2)} ms`,
      pass: i.gateway.gatewayWorkPerCallMs < TARGETS.gatewayWorkMs,
    },
  } satisfies Record<string, Target>);
  return {
    ratios: vsContract,
    bareFloorRatios: ratiosAgainst(i.pairs, (p) => p.floor),
    peerRatios: Object.fromEntries(
      Object.keys(i.pairs[0].peers).map((peer) => [
        peer,
        ratiosAgainst(i.pairs, (p) => p.peers[peer as PeerName]),
      ]),
    ) as Partial<Record<PeerName, Ratios>>,
    targets,
  };
}

interface Printable {
  timestamp: string;
  machine: Machine & { loadAverage1mAtEnd: number };
  options: {
    runs: number;
    parked: number;
    concurrency: number;
    workerConcurrency: number;
    logLevel: string;
    openLoopSeconds: number;
  };
  redis: { measuredOn: string; cpuRead: boolean };
  roundTrip: RoundTripResult;
  floor: FloorResult;
  contractFloor: RoundTripResult;
  peers: Partial<Record<PeerName, FloorResult | { skipped: string }>> | { skipped: string };
  ratios: Ratios;
  bareFloorRatios: Ratios;
  peerRatios: Partial<Record<PeerName, Ratios>>;
  targets: Record<string, Target>;
  openLoop: OpenLoopResult[];
  trips: { countersign: TripsSummary; contractFloor: TripsSummary } | { skipped: string };
  cluster: ClusterRoundTrip[] | { skipped: string };
  pairs: ReturnType<typeof summarizePair>[];
  scaleOut: { workers: number; runsPerSecond: number; decisionToExecution: { p99Ms: number } }[];
  parked: ParkedResult & { measuredOn: { redis: string; composeSettings?: string[] } };
  autoOverhead: AutoOverheadResult;
  /** The same through a worker whose auto tool has an admission before-hook (a local hook answering allow). */
  hookOverhead: HookOverheadResult;
  /** The same auto calls with a Cedar set of 50 policies in RBAC's place (absent in results of older benches). */
  cedarOverhead?: AutoOverheadResult;
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
const cpuPerCall = (v: number | undefined) => (v === undefined ? 'not read' : `${ms(v)} CPU/call`);
const rate = (v: number) => `${v.toFixed(0)} runs/s`;
const percentiles = (l: LatencySummary) => `${ms(l.p50Ms)} / ${ms(l.p95Ms)} / ${ms(l.p99Ms)}`;
const top = (perCommand: Record<string, number>) =>
  Object.entries(perCommand)
    .slice(0, 5)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
const verdict = (t: Target) => (t.pass === null ? 'n/a' : t.pass ? 'PASS' : 'MISS');
const judged = (t: Target) => `${verdict(t)} (${t.target})`;
const ratioText = (v: number | null) => (v === null ? 'n/a' : times(v));

type Row = [string, string, string];

function printRows(title: string, header: [string, string, string], rows: Row[]): void {
  const w0 = Math.max(header[0].length, ...rows.map((row) => row[0].length));
  const w1 = Math.max(header[1].length, ...rows.map((row) => row[1].length));
  console.log(title);
  console.log(`${header[0].padEnd(w0)} | ${header[1].padEnd(w1)} | ${header[2]}`);
  console.log(`${'-'.repeat(w0)}-|-${'-'.repeat(w1)}-|-${'-'.repeat(40)}`);
  for (const [name, value, note] of rows) console.log(`${name.padEnd(w0)} | ${value.padEnd(w1)} | ${note}`);
  console.log('');
}

const COLUMNS: [Role, string][] = [
  ['worker', 'worker'],
  ['approval', 'approval svc'],
  ['redis', 'Redis'],
  ['postgres', 'Postgres'],
  ['driver', 'driver'],
];

/** The CPU table: ms per round trip by process, total, commands and bytes to Redis; medians of the pairs. */
function printCpuTable(r: Printable): void {
  const phases: [string, FloorResult | RoundTripResult][] = [
    ['Countersign', r.roundTrip],
    ['bare floor', r.floor],
    ['contract floor', r.contractFloor],
  ];
  if (!('skipped' in r.peers))
    for (const [peer, result] of Object.entries(r.peers))
      if (result && !('skipped' in result)) phases.push([PEER_LABELS[peer as PeerName], result]);
  const cell = (cpu: CpuPerRun | null, role: Role) =>
    cpu?.[role] === undefined ? '—' : cpu[role]!.toFixed(2);
  const header = [
    'per approval round trip',
    ...COLUMNS.map(([, label]) => label),
    'total',
    'Redis commands',
    'bytes to Redis',
  ];
  const rows = phases.map(([name, p]) => [
    name,
    ...COLUMNS.map(([role]) => cell(p.cpuMsPerRun, role)),
    p.cpuMsPerRun ? `${p.cpuMsPerRun.total.toFixed(2)} ms` : 'n/a',
    p.redisCommandsPerRun.total.toFixed(1),
    `${(p.redisBytesPerRun.in / 1024).toFixed(1)} KB`,
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) =>
    cells.map((text, c) => (c === 0 ? text.padEnd(widths[c]) : text.padStart(widths[c]))).join(' | ');
  console.log(
    `CPU per round trip in ms (utime + stime from /proc/<pid>/stat of each process the bench started), Redis ` +
      `commands and bytes to Redis per run; ${r.redis.measuredOn}; the median of ${r.pairs.length} pair(s)` +
      (r.redis.cpuRead ? '' : '; totals without Redis'),
  );
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(row));
  if ('skipped' in r.peers) console.log(`peers: ${r.peers.skipped}`);
  else
    for (const [peer, result] of Object.entries(r.peers))
      if (result && 'skipped' in result)
        console.log(`${PEER_LABELS[peer as PeerName]}: skipped, ${result.skipped}`);
  console.log('');
}

function closedLoopRows(r: Printable): Row[] {
  const rt = r.roundTrip;
  const fl = r.floor;
  const cf = r.contractFloor;
  const of = r.pairs.length > 1 ? `; the median of ${r.pairs.length} pairs` : '';
  return [
    [`round trips (1 worker, N=${rt.runs}, closed loop)`, rate(rt.runsPerSecond), `${rt.failed} failed${of}`],
    [
      '  decision → tool runs p50 / p95 / p99',
      percentiles(rt.decisionToExecution),
      `max ${ms(rt.decisionToExecution.maxMs)}`,
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
      percentiles(fl.decisionToExecution),
      `max ${ms(fl.decisionToExecution.maxMs)}`,
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
      percentiles(cf.decisionToExecution),
      `max ${ms(cf.decisionToExecution.maxMs)}`,
    ],
    ['  decision POST p50 / p99', `${ms(cf.decisionPost.p50Ms)} / ${ms(cf.decisionPost.p99Ms)}`, ''],
    [
      '  Redis commands per run (all clients)',
      `${cf.redisCommandsPerRun.total}`,
      top(cf.redisCommandsPerRun.perCommand),
    ],
  ];
}

function targetRows(r: Printable): Row[] {
  const t = r.targets;
  const median = r.pairs.length > 1 ? ' (median of the pairs)' : '';
  const rows: Row[] = [
    [
      `CPU per round trip Countersign / contract floor${median}`,
      t.cpuPerRoundTrip.measured,
      judged(t.cpuPerRoundTrip),
    ],
    ['  Redis CPU per round trip', t.redisCpu.measured, judged(t.redisCpu)],
    ['  Redis commands per round trip', t.redisCommands.measured, judged(t.redisCommands)],
    ['  bytes to Redis per round trip', t.redisBytes.measured, judged(t.redisBytes)],
    [
      `CPU per round trip Countersign / bare floor${median}`,
      ratioText(r.bareFloorRatios.cpuTotal),
      `shown, not judged; Redis CPU ${ratioText(r.bareFloorRatios.redisCpu)}, commands ${ratioText(r.bareFloorRatios.redisCommands)}, bytes ${ratioText(r.bareFloorRatios.redisBytes)}`,
    ],
    ...Object.entries(r.peerRatios).map(([peer, ratios]): Row => [
      `CPU per round trip Countersign / ${peer}${median}`,
      ratioText(ratios!.cpuTotal),
      `shown, not judged; Redis commands ${ratioText(ratios!.redisCommands)}, bytes ${ratioText(ratios!.redisBytes)}`,
    ]),
    [
      `throughput Countersign / contract floor${median}`,
      r.ratios.throughput === null ? 'n/a' : `${(r.ratios.throughput * 100).toFixed(1)}%`,
      `shown, not judged (CPU-bound machine: throughput is one over CPU); bare floor ${r.bareFloorRatios.throughput === null ? 'n/a' : `${(r.bareFloorRatios.throughput * 100).toFixed(1)}%`}`,
    ],
    [
      `closed-loop p99 Countersign / contract floor${median}`,
      ratioText(r.ratios.p99),
      'shown, not judged (the open loop below is)',
    ],
  ];
  if (r.pairs.length > 1)
    rows.push([
      '  each pair: CPU vs contract floor / vs bare floor',
      r.pairs
        .map((p) => `${ratioText(p.vsContractFloor.cpuTotal)} / ${ratioText(p.vsBareFloor.cpuTotal)}`)
        .join(', '),
      'phases back to back',
    ]);
  for (const o of r.openLoop) {
    const key = `openLoopP99At${o.ratePerSecond}`;
    const samples = o.samples.length > 1 ? `; the median of ${o.samples.length}` : '';
    rows.push(
      [
        `open loop ${o.ratePerSecond} runs/s (N=${o.runs}): decision → tool p50 / p95 / p99`,
        percentiles(o.countersign.decisionToExecution),
        `Countersign; start lag p99 ${ms(o.countersign.startLag?.p99Ms ?? 0)}; ${o.countersign.failed} failed${samples}`,
      ],
      [
        '  contract floor',
        percentiles(o.contractFloor.decisionToExecution),
        `start lag p99 ${ms(o.contractFloor.startLag?.p99Ms ?? 0)}`,
      ],
      [
        '  p99 Countersign / contract floor',
        times(o.p99Ratio),
        t[key]
          ? judged(t[key])
          : `shown, not judged; pairs ${o.samples.map((s) => times(s.p99Ratio)).join(', ')}`,
      ],
    );
  }
  for (const rateNotRun of TARGETS.openLoopRates.filter(
    (n) => !r.openLoop.some((o) => o.ratePerSecond === n),
  ))
    rows.push([`open loop ${rateNotRun} runs/s`, 'not run', judged(t[`openLoopP99At${rateNotRun}`])]);
  rows.push(
    'skipped' in r.trips
      ? ['sequential Redis trips, decision → tool', 'n/a', judged(t.decisionTrips)]
      : [
          'sequential Redis trips, decision → tool (MONITOR)',
          `${r.trips.countersign.decisionToTool.trips}`,
          `${judged(t.decisionTrips)}; samples ${r.trips.countersign.decisionToTool.samples.join(', ')}; ` +
            `contract floor ${r.trips.contractFloor.decisionToTool.trips}; whole run ${r.trips.countersign.wholeRun.trips} vs ${r.trips.contractFloor.wholeRun.trips}`,
        ],
  );
  return rows;
}

function otherRows(r: Printable): Row[] {
  return [
    ...('skipped' in r.cluster
      ? [['round trips on Redis Cluster', 'skipped', r.cluster.skipped] as Row]
      : r.cluster.flatMap((k): Row[] => [
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
    ...r.scaleOut.map((s): Row => [
      `scale-out: ${s.workers} worker process${s.workers > 1 ? 'es' : ''}`,
      rate(s.runsPerSecond),
      `p99 ${ms(s.decisionToExecution.p99Ms)}`,
    ]),
    [
      `parked runs at rest (N=${r.parked.runs.toLocaleString('en-US')})`,
      `${Math.round(r.parked.infoBytesPerRun)} B/run`,
      `${judged(r.targets.parkedMemory)}, INFO used_memory`,
    ],
    [
      '  measured on',
      r.parked.measuredOn.redis.startsWith('private') ? 'private redis-server' : 'shared Redis',
      r.parked.measuredOn.composeSettings?.join(' ') ?? 'its own settings; other clients count',
    ],
    ['  run state + request jobs (MEMORY USAGE)', `${Math.round(r.parked.stateBytesPerRun)} B/run`, ''],
    ...Object.entries(r.parked.breakdown)
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .map(([name, c]): Row => [`    ${name}`, `${c.bytesPerRun.toFixed(0)} B/run`, `${c.keys} keys`]),
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
      `${judged(r.targets.autoOverhead)}; median of ${r.autoOverhead.repeats}`,
    ],
    ...(r.cedarOverhead
      ? ([
          [
            `auto tier, Cedar set of 50 policies: ${r.cedarOverhead.calls} calls`,
            `${ms(r.cedarOverhead.perCallThroughWorkerMs)}/call`,
            `run ${ms(r.cedarOverhead.runWithCallsMs)} − empty run ${ms(r.cedarOverhead.emptyRunMs)}`,
          ],
          [
            '  overhead per auto call with Cedar',
            `${ms(r.cedarOverhead.overheadPerCallMs)}/call`,
            `${ms(r.cedarOverhead.overheadPerCallMs - r.autoOverhead.overheadPerCallMs)} above RBAC; median of ${r.cedarOverhead.repeats}; not judged`,
          ],
        ] as Row[])
      : []),
    [
      '  worker CPU per auto call',
      cpuPerCall(r.autoOverhead.workerCpuPerCallMs),
      `(run − empty run) / calls, means of ${r.autoOverhead.repeats}`,
    ],
    [
      '  Redis commands per auto call',
      r.autoOverhead.redisCommandsPerCall.toFixed(1),
      `(run − empty run) / calls, means; INFO commandstats${r.redis.cpuRead ? '' : ', other clients count too'}`,
    ],
    [
      `auto tier with a before-hook: ${r.hookOverhead.withHook.calls} calls`,
      `${ms(r.hookOverhead.withHook.perCallThroughWorkerMs)}/call`,
      `a local hook answering allow; ${r.hookOverhead.hookRequests} hook requests`,
    ],
    [
      '  cost of the hook per call',
      `${ms(r.hookOverhead.hookPerCallMs)}/call`,
      `with the hook − without; median of ${r.hookOverhead.withHook.repeats}`,
    ],
    [
      '  worker CPU of the hook per call',
      cpuPerCall(r.hookOverhead.hookWorkerCpuPerCallMs),
      `with ${cpuPerCall(r.hookOverhead.withHook.workerCpuPerCallMs)} − without`,
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
      `shown; median of ${r.gatewayOverhead.repeats}`,
    ],
    [
      '    of which one more MCP hop (bare proxy)',
      `${ms(r.gatewayOverhead.extraHopPerCallMs)}/call`,
      `bare proxy ${ms(r.gatewayOverhead.bareProxyPerCallMs)}/call: the SDK transports, nothing else`,
    ],
    [
      '    of which the gateway’s own work',
      `${ms(r.gatewayOverhead.gatewayWorkPerCallMs)}/call`,
      `${verdict(r.targets.gatewayWork)} (< ${TARGETS.gatewayWorkMs} ms above a bare SDK proxy)`,
    ],
  ];
}

export function printTables(r: Printable): void {
  const m = r.machine;
  console.log('');
  console.log(
    `Countersign benchmark ${r.timestamp} — ${m.cores} × ${m.cpuModel}, node ${m.node}, redis ${m.redis}, ` +
      `load ${m.loadAverage1mAtStart} → ${m.loadAverage1mAtEnd}; concurrency ${r.options.concurrency}, ` +
      `worker concurrency ${r.options.workerConcurrency}, LOG_LEVEL=${r.options.logLevel}`,
  );
  console.log('');
  printCpuTable(r);
  const header: Row = ['measurement', 'value', 'note'];
  printRows('Targets (issue 27) and the figures they come from', header, targetRows(r));
  printRows('Closed loop (informative)', header, closedLoopRows(r));
  printRows('Kept targets and the other phases', header, otherRows(r));
  const missed = Object.entries(r.targets).filter(([, t]) => t.pass !== true);
  console.log(
    missed.length
      ? `targets not met: ${missed.map(([name, t]) => `${name} (${verdict(t)})`).join(', ')}`
      : 'every target met',
  );
  console.log('');
}

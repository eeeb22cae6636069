// The flags of `npm run bench`, their defaults (`--quick` sizes a smoke run) and the usage text `--help` prints.
import { resolve } from 'node:path';
import { BenchSetupError, checkFlags } from './support/cli';

export interface BenchOptions {
  runs: number;
  parked: number;
  workerCounts: number[];
  /** Runs in flight at once (closed loop) and decision POSTs in flight at once; the floor uses the same bounds. */
  concurrency: number;
  workerConcurrency: number;
  parkedWorkers: number;
  parkedWorkerConcurrency: number;
  autoRepeats: number;
  warmup: number;
  /** Countersign, both floors and the peers measured this many times, alternately; figures and ratios are medians. */
  pairs: number;
  /** Open-loop rates (runs/s); empty with `--open-loop off`. */
  openLoopRates: number[];
  /** Seconds of runs started at each rate, per sample. */
  openLoopSeconds: number;
  /** Countersign and the contract floor measured this many times at each rate, alternately. */
  openLoopPairs: number;
  /** Runs of Countersign and of the contract floor under MONITOR, one at a time, for the sequential trips. */
  tripSamples: number;
  peers: boolean;
  /** Where the LangGraph peer creates (and drops) its database. */
  postgresUrl: string;
  /** Measure on this Redis instead of a private redis-server (then Redis's CPU is not read). */
  redisUrl?: string;
  /** Masters of each local Redis Cluster the round trip runs on; empty with --no-cluster. */
  clusterMasters: number[];
  clusterRuns: number;
  logLevel: string;
  out: string;
  quick: boolean;
  strict: boolean;
  cpuProf?: string;
}

export const USAGE = `Usage: npm run bench [-- <flags>]

Starts a private redis-server (REDIS_SERVER_BIN or redis-server on the PATH), the approval service, an agent worker,
the two floors (and with --peers two other frameworks' approval loops) on it, measures the approval round trip in
alternating pairs — CPU per round trip of every process by /proc/<pid>/stat, Redis commands and bytes per run, the
closed-loop throughput and latency —, then the open-loop latency at fixed rates, the sequential Redis trips of the
decision path (MONITOR), the auto-tier, MCP and gateway overheads, scale-out, Redis Cluster and parked-run memory.
Prints the tables with each target's verdict and writes the results file. bench/README.md says what each figure is.

  --runs N                          runs per round-trip phase (2000; --quick 50)
  --pairs N                         Countersign, floors and peers measured N times alternately (5; --quick 1)
  --concurrency C                   runs in flight in the closed loop, decisions in flight (16)
  --worker-concurrency C            WORKER_CONCURRENCY of each worker, the floors' and peers' too (16)
  --warmup N                        unrecorded runs of each phase first (100; --quick 10)
  --open-loop 50,200 | off          open-loop rates in runs/s (50,200)
  --open-loop-seconds S             seconds of scheduled starts per sample and rate (10; --quick 1)
  --open-loop-pairs N               samples of Countersign and the contract floor per rate (3; --quick 1)
  --trip-samples N                  runs counted under MONITOR for the sequential trips (3; --quick 1)
  --peers                           also LangGraph.js + Postgres checkpointer and OpenAI Agents SDK loops
  --postgres-url URL                the LangGraph peer's server (postgresql://postgres@127.0.0.1:5432/postgres);
                                    it creates a database there and drops it; absent server: the peer is skipped
  --redis-url URL                   measure on this Redis instead of a private redis-server (Redis CPU and the
                                    trips are then not measured: other clients would count)
  --workers 1,2,4                   worker process counts for scale-out (1,2,4; --quick 1)
  --cluster-masters 1,3             the round trip on a local Redis Cluster of each size (1,3)
  --cluster-runs N                  runs per cluster phase (1000; --quick 50)
  --no-cluster                      skip the cluster phase
  --parked N                        parked runs for the memory phase (100000; --quick 2000)
  --parked-workers N                workers that park them (2)
  --parked-worker-concurrency C     their WORKER_CONCURRENCY (32)
  --auto-repeats N                  repeats of the auto-tier, MCP and gateway measurements (10; --quick 3)
  --log-level LEVEL                 LOG_LEVEL of the services (warn)
  --quick                           smoke-sized run (the smoke test uses it)
  --out FILE                        results file (bench/results.json)
  --cpu-prof DIR                    every child writes a V8 CPU profile into DIR
  --strict                          exit 1 when a target is missed or could not be measured
  --help                            this text (starts nothing)

Exit codes: 0 done, 1 a target missed under --strict or a phase failed, 2 a bad flag or an unreachable server.`;

const VALUE_FLAGS = [
  'runs',
  'pairs',
  'concurrency',
  'worker-concurrency',
  'warmup',
  'open-loop',
  'open-loop-seconds',
  'open-loop-pairs',
  'trip-samples',
  'postgres-url',
  'redis-url',
  'workers',
  'cluster-masters',
  'cluster-runs',
  'parked',
  'parked-workers',
  'parked-worker-concurrency',
  'auto-repeats',
  'log-level',
  'out',
  'cpu-prof',
];
const FLAGS = ['peers', 'no-cluster', 'quick', 'strict'];

export function parseArgs(argv: string[]): BenchOptions {
  checkFlags(argv, { flags: FLAGS, values: VALUE_FLAGS });
  const flag = (name: string) => argv.includes(`--${name}`);
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (name: string, fallback: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw.replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 1)
      throw new BenchSetupError(`--${name} must be a positive integer, got "${raw}"`);
    return n;
  };
  const list = (name: string, fallback: string, min: number, max: number) => {
    const raw = value(name) ?? fallback;
    const numbers = raw.split(',').map(Number);
    if (numbers.some((n) => !Number.isInteger(n) || n < min || n > max))
      throw new BenchSetupError(`--${name} must be a comma-separated list of ${min}..${max}, got "${raw}"`);
    return numbers;
  };
  const quick = flag('quick');
  const openLoop = value('open-loop') ?? '50,200';
  return {
    runs: int('runs', quick ? 50 : 2_000),
    parked: int('parked', quick ? 2_000 : 100_000),
    workerCounts: list('workers', quick ? '1' : '1,2,4', 1, 16),
    concurrency: int('concurrency', 16),
    workerConcurrency: int('worker-concurrency', 16),
    parkedWorkers: int('parked-workers', 2),
    parkedWorkerConcurrency: int('parked-worker-concurrency', 32),
    autoRepeats: int('auto-repeats', quick ? 3 : 10),
    warmup: int('warmup', quick ? 10 : 100),
    pairs: int('pairs', quick ? 1 : 5),
    openLoopRates: openLoop === 'off' ? [] : list('open-loop', openLoop, 1, 10_000),
    openLoopSeconds: int('open-loop-seconds', quick ? 1 : 10),
    openLoopPairs: int('open-loop-pairs', quick ? 1 : 3),
    tripSamples: int('trip-samples', quick ? 1 : 3),
    peers: flag('peers'),
    postgresUrl: value('postgres-url') ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    redisUrl: value('redis-url'),
    clusterMasters: flag('no-cluster') ? [] : list('cluster-masters', '1,3', 1, 6),
    clusterRuns: int('cluster-runs', quick ? 50 : 1_000),
    logLevel: value('log-level') ?? 'warn',
    out: resolve(value('out') ?? resolve(__dirname, 'results.json')),
    quick,
    strict: flag('strict'),
    cpuProf: value('cpu-prof') && resolve(value('cpu-prof')!),
  };
}

// `npm run bench`: end-to-end benchmarks of Countersign against a real Redis — approval round trips and their
// bare-BullMQ floor, scale-out over worker processes, Redis memory of parked runs, auto-tier overhead, and the
// overhead of an auto MCP call through the worker against calling the same MCP server directly.
// Prints one table and writes bench/results.json. `--quick` is a smoke-sized run. See bench/README.md.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { DEFAULT_QUEUE_PREFIX, tokenSha256 } from '@countersign/contracts';
import { deletePrefixedKeys, uniquePrefixes, type TestPrefixes } from '../test/support/redis';
import { autoOverhead } from './phases/auto-overhead';
import { floor } from './phases/floor';
import { mcpOverhead } from './phases/mcp-overhead';
import { parkRuns } from './phases/parked';
import { roundTrips, type RoundTripResult } from './phases/round-trip';
import { describeMachine } from './support/measure';
import { startPrivateRedis } from './support/private-redis';
import {
  allHealthy,
  type Child,
  profileChildrenInto,
  type ServiceEnv,
  startApprovalService,
  startFloorWorker,
  startOpsMcpServer,
  startWorker,
  waitReady,
} from './support/processes';
import { medianPair, type Pair, printTable, summarizePair, verdicts } from './report';

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
  /** Round trip + floor measured this many times, alternately; the ratios are medians over the pairs. */
  pairs: number;
  logLevel: string;
  out: string;
  quick: boolean;
  strict: boolean;
  cpuProf?: string;
}

const APPROVER_TOKEN = 'bench-approver-token-0123456789';
/** alice starts the runs (an operator of the `ops` agent); bench-approver decides them. */
const REQUESTER_TOKEN = 'bench-requester-token-0123456789';
/** The workers' machine client, the one caller the ops MCP server lets in. */
const OPS_MCP_TOKEN = 'bench-agent-worker-token-0123456789';
const PRINCIPALS_CONFIG = JSON.stringify({
  principals: [
    { id: 'alice', name: 'Bench requester', tokens: [{ sha256: tokenSha256(REQUESTER_TOKEN) }] },
    { id: 'bench-approver', name: 'Bench approver', tokens: [{ sha256: tokenSha256(APPROVER_TOKEN) }] },
    {
      id: 'agent-worker',
      name: 'Bench agent workers',
      kind: 'machine',
      tokens: [{ sha256: tokenSha256(OPS_MCP_TOKEN) }],
    },
  ],
});
/**
 * The bench starts and decides thousands of runs a minute as one principal from one address, far past the defaults
 * for real use. The limits stay on (each run start and decision is counted, as in production), set far higher.
 */
const BENCH_RATE_LIMITS = {
  RATE_LIMIT_RUN_STARTS: '1000000/1m',
  RATE_LIMIT_RUN_STARTS_ADDRESS: '1000000/1m',
  RATE_LIMIT_DECISIONS: '1000000/1m',
  RATE_LIMIT_DECISIONS_ADDRESS: '1000000/1m',
};
const APPROVALS_CONFIG = JSON.stringify({
  groups: [{ id: 'bench', members: ['bench-approver'] }],
  defaultGroup: 'bench',
  defaults: { channels: ['web'], expiresIn: '30m' },
});

export function parseArgs(argv: string[]): BenchOptions {
  const flag = (name: string) => argv.includes(`--${name}`);
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (name: string, fallback: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw.replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
    return n;
  };
  const quick = flag('quick');
  const workers = value('workers') ?? (quick ? '1' : '1,2,4');
  const workerCounts = workers.split(',').map(Number);
  if (workerCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 16))
    throw new Error(`--workers must be a comma-separated list of 1..16, got "${workers}"`);
  return {
    runs: int('runs', quick ? 50 : 2_000),
    parked: int('parked', quick ? 2_000 : 100_000),
    workerCounts,
    concurrency: int('concurrency', 16),
    workerConcurrency: int('worker-concurrency', 16),
    parkedWorkers: int('parked-workers', 2),
    parkedWorkerConcurrency: int('parked-worker-concurrency', 32),
    autoRepeats: int('auto-repeats', quick ? 3 : 10),
    warmup: int('warmup', quick ? 10 : 100),
    pairs: int('pairs', quick ? 1 : 3),
    logLevel: value('log-level') ?? 'warn',
    out: resolve(value('out') ?? resolve(__dirname, 'results.json')),
    quick,
    strict: flag('strict'),
    cpuProf: value('cpu-prof') && resolve(value('cpu-prof')!),
  };
}

const log = (message: string) => console.log(`[bench] ${message}`);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  profileChildrenInto(options.cpuProf);
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(redisUrl);
  const machine = await describeMachine(redis);
  const main = uniquePrefixes('bench');
  const mcpPrefixes = uniquePrefixes('bench-mcp');
  let parkedPrefixes = uniquePrefixes('bench-parked');
  const children: Child[] = [];
  const envOf = (p: TestPrefixes): ServiceEnv => ({
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: p.queuePrefix,
    KEY_PREFIX: p.keyPrefix,
    DECISION_SIGNING_SECRET: 'bench-decision-secret-0123456789',
    AUDIT_SIGNING_SECRET: 'bench-audit-signing-secret-0123456789abcdef',
    PRINCIPALS_CONFIG,
    LOG_LEVEL: options.logLevel,
    ...BENCH_RATE_LIMITS,
  });
  // The parked-run phase runs on a redis-server of its own when there is one (see support/private-redis.ts).
  let parkedRedisUrl = redisUrl;
  let stopParkedRedis: (() => Promise<void>) | undefined;
  const spawned = <C extends Child>(child: C): C => {
    children.push(child);
    return child;
  };
  const stopAll = async (which: Child[]) => {
    await Promise.all(which.map((c) => c.stop()));
  };
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await stopAll(children);
    const deleted =
      (await deletePrefixedKeys(main, redisUrl)) +
      (await deletePrefixedKeys(mcpPrefixes, redisUrl)) +
      (stopParkedRedis ? 0 : await deletePrefixedKeys(parkedPrefixes, redisUrl));
    await stopParkedRedis?.();
    log(
      `cleaned up ${deleted.toLocaleString('en-US')} keys under ${main.keyPrefix}, ${mcpPrefixes.keyPrefix} and ${parkedPrefixes.keyPrefix}`,
    );
  };
  process.once('SIGINT', () => {
    log('interrupted: stopping children and cleaning up');
    void cleanUp().finally(() => process.exit(130));
  });

  log(
    `node ${machine.node}, redis ${machine.redis}, ${machine.cores} × ${machine.cpuModel}, load ${machine.loadAverage1mAtStart}`,
  );
  log(
    `runs ${options.runs}, workers ${options.workerCounts.join('/')}, parked ${options.parked}, concurrency ${options.concurrency}`,
  );
  const started = new Date();
  try {
    const env = envOf(main);
    log('starting the approval service, one agent worker and the floor worker');
    const approval = spawned(
      await startApprovalService(env, {
        approvalsConfig: APPROVALS_CONFIG,
        linkSecret: 'bench-link-secret-0123456789',
      }),
    );
    const workers = [spawned(await startWorker(0, env, { concurrency: options.workerConcurrency }))];
    const floorWorker = spawned(
      startFloorWorker({
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: env.QUEUE_PREFIX,
        CONCURRENCY: String(options.workerConcurrency),
      }),
    );
    await Promise.all([allHealthy([approval, ...workers]), waitReady(floorWorker)]);

    /** Round trips over `over` (by default every worker started so far). */
    const roundTrip = (label: string, runs: number, quiet = false, over: Child[] = workers) =>
      roundTrips({
        label,
        runs,
        workers: over,
        approvalUrl: approval.url!,
        approverToken: APPROVER_TOKEN,
        requesterToken: REQUESTER_TOKEN,
        startConcurrency: options.concurrency,
        decideConcurrency: options.concurrency,
        quiet,
        redis,
      });
    const floorRun = (label: string, runs: number, quiet = false) =>
      floor({
        label,
        runs,
        worker: floorWorker,
        redisUrl,
        queuePrefix: env.QUEUE_PREFIX,
        startConcurrency: options.concurrency,
        decideConcurrency: options.concurrency,
        quiet,
        commandsRedis: redis,
      });

    log(`warming up (${options.warmup} round trips and ${options.warmup} floor runs, not recorded)`);
    await roundTrip('warm-up', options.warmup, true);
    await floorRun('warm-up', options.warmup, true);

    // Alternating pairs: the floor moves as much as Countersign does from one minute to the next on a shared
    // VM, so each ratio compares two phases measured back to back, and the reported ratios are medians.
    const pairs: Pair[] = [];
    for (let i = 1; i <= options.pairs; i++) {
      const of = options.pairs > 1 ? ` (pair ${i} of ${options.pairs})` : '';
      const rt = await roundTrip(`round trips, 1 worker${of}`, options.runs);
      const fl = await floorRun(`floor (bare BullMQ)${of}`, options.runs);
      pairs.push({ roundTrip: rt, floor: fl });
    }
    const { roundTrip: countersign, floor: floorResult } = medianPair(pairs);
    await floorWorker.stop();

    const auto = await autoOverhead({
      worker: workers[0],
      redisUrl,
      keyPrefix: env.KEY_PREFIX,
      requesterToken: REQUESTER_TOKEN,
      repeats: options.autoRepeats,
      calls: 100,
    });

    // Its own prefixes: a worker of the main prefix would take these runs off the shared queue.
    log('starting the ops MCP server and a worker whose ops tools come from it (config/agents.json)');
    const mcpEnv = envOf(mcpPrefixes);
    const opsServer = spawned(await startOpsMcpServer(mcpEnv));
    await allHealthy([opsServer]);
    const opsServerUrl = `${opsServer.url}/mcp`;
    const mcpWorker = spawned(
      await startWorker('mcp', mcpEnv, {
        concurrency: options.workerConcurrency,
        agentsConfig: 'config/agents.json',
        extraEnv: { OPS_MCP_URL: opsServerUrl, OPS_MCP_TOKEN },
      }),
    );
    await allHealthy([mcpWorker]);
    const mcp = await mcpOverhead({
      worker: mcpWorker,
      opsServerUrl,
      opsServerToken: OPS_MCP_TOKEN,
      redisUrl,
      keyPrefix: mcpEnv.KEY_PREFIX,
      requesterToken: REQUESTER_TOKEN,
      repeats: options.autoRepeats,
      calls: 100,
    });
    await stopAll([mcpWorker, opsServer]);

    const scaleOut: { workers: number; result: RoundTripResult }[] = [];
    for (const count of options.workerCounts) {
      if (count === 1) {
        scaleOut.push({ workers: 1, result: countersign });
        continue;
      }
      const added: Child[] = [];
      for (let i = workers.length; i < count; i++) {
        added.push(spawned(await startWorker(i, env, { concurrency: options.workerConcurrency })));
      }
      await allHealthy(added);
      workers.push(...added);
      // New processes are cold; trimming extra workers (a list like 4,2) keeps the first `count`.
      const active = workers.slice(0, count);
      await roundTrip('warm-up', options.warmup, true, active);
      const result = await roundTrip(`round trips, ${count} workers`, options.runs, false, active);
      scaleOut.push({ workers: count, result });
    }
    await stopAll(children.filter((c) => c.running));

    const privateRedis = await startPrivateRedis();
    let parkedOn: { redis: string; composeSettings?: string[] } = { redis: 'shared (REDIS_URL)' };
    if (privateRedis) {
      parkedRedisUrl = privateRedis.url;
      stopParkedRedis = privateRedis.stop;
      parkedOn = { redis: `private redis-server ${parkedRedisUrl}`, composeSettings: privateRedis.settings };
      // Nobody else uses this server, so the runs get the production prefixes: key names are part of what a
      // parked run costs, and a test prefix is 17 characters longer than `countersign`.
      parkedPrefixes = { keyPrefix: 'countersign', queuePrefix: DEFAULT_QUEUE_PREFIX };
      log(
        `parked runs on a private redis-server with docker-compose.yml's settings: ${privateRedis.settings.join(' ')}`,
      );
    } else {
      log(
        'no redis-server binary: parked runs measured on the shared Redis (its own settings, other clients count)',
      );
    }
    log(
      `parking ${options.parked} runs with ${options.parkedWorkers} worker process(es); approval service not running`,
    );
    const parkedEnv = { ...envOf(parkedPrefixes), REDIS_URL: parkedRedisUrl };
    const parkedConnection = new Redis(parkedRedisUrl);
    const parkedWorkers: Child[] = [];
    for (let i = 0; i < options.parkedWorkers; i++) {
      parkedWorkers.push(
        spawned(await startWorker(i, parkedEnv, { concurrency: options.parkedWorkerConcurrency })),
      );
    }
    await allHealthy(parkedWorkers);
    const parked = await parkRuns({
      runs: options.parked,
      redis: parkedConnection,
      keyPrefix: parkedPrefixes.keyPrefix,
      queuePrefix: parkedPrefixes.queuePrefix,
      workers: parkedWorkers,
    });
    await stopAll(parkedWorkers);
    parkedConnection.disconnect();

    const results = {
      timestamp: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { ...machine, loadAverage1mAtEnd: Number(loadavg()[0].toFixed(2)) },
      options: { ...options, out: undefined },
      roundTrip: countersign,
      floor: floorResult,
      ...verdicts(pairs, parked, mcp),
      pairs: pairs.map(summarizePair),
      scaleOut: scaleOut.map((s) => ({ workers: s.workers, ...s.result })),
      parked: { ...parked, measuredOn: parkedOn },
      autoOverhead: auto,
      mcpOverhead: mcp,
      definitions: {
        decisionToExecution:
          'from the moment the approver stand-in starts sending its decision (HTTP POST for Countersign, queue add ' +
          'for the floor) to the moment the worker enters the tool handler (ToolCallPipeline.execute, reported by a ' +
          'probe preloaded into the worker process only by the bench); both are wall-clock times ' +
          '(performance.timeOrigin + performance.now()) of processes on one machine',
        throughput: 'runs / (last run finished − first run started)',
        parked:
          'INFO used_memory after − before, over the runs; completed start jobs (BullMQ retention) cleaned first',
        mcpOverhead:
          '(run with N auto MCP calls − run with none) / N through a worker on config/agents.json, minus the same ' +
          'tool of the same ops MCP server called N times by an MCP client of the bench, same concurrency (4)',
      },
    };
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    printTable(results);
    log(`results written to ${options.out}`);
    if (options.strict && Object.values(results.targets).some((t) => !t.pass)) process.exitCode = 1;
  } catch (error) {
    for (const child of children) {
      const output = child.output();
      if (output) console.error(`[bench] last output of ${child.name}:\n${output.slice(-3_000)}`);
    }
    throw error;
  } finally {
    await cleanUp();
    redis.disconnect();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: Error) => {
      console.error(`[bench] failed: ${error.stack ?? error.message}`);
      process.exit(1);
    },
  );
}

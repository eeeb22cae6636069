// `npm run bench`: end-to-end benchmarks of Countersign against a real Redis — approval round trips against two
// floors (bare BullMQ; bare BullMQ plus the contract's HTTP and SSE hops), the round trip on a local Redis Cluster of
// 1 and 3 masters, scale-out over worker processes, Redis memory of parked runs, auto-tier overhead, and the
// overhead of an auto MCP call through the worker, and through the MCP gateway, against calling the same MCP server
// directly.
// Prints one table and writes bench/results.json. `--quick` is a smoke-sized run. See bench/README.md.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { DEFAULT_QUEUE_PREFIX, tokenSha256 } from '@countersign/contracts';
import { deletePrefixedKeys, uniquePrefixes, type TestPrefixes } from '../test/support/redis';
import { autoOverhead } from './phases/auto-overhead';
import { floor } from './phases/floor';
import { gatewayOverhead } from './phases/gateway-overhead';
import { mcpOverhead } from './phases/mcp-overhead';
import { parkRuns } from './phases/parked';
import { clusterRoundTrips } from './phases/cluster';
import { roundTrips, type RoundTripResult } from './phases/round-trip';
import { describeMachine } from './support/measure';
import { startPrivateRedis } from './support/private-redis';
import {
  allHealthy,
  type Child,
  profileChildrenInto,
  type ServiceEnv,
  startApprovalService,
  startBareMcpProxy,
  startContractFloor,
  startFloorWorker,
  startMcpGateway,
  startOpsMcpServer,
  startWorker,
  waitReady,
} from './support/processes';
import { type ClusterRoundTrip, medianPair, type Pair, printTable, summarizePair, verdicts } from './report';
import { FLOOR_TOOL } from './floor-worker';
import { OwnRedisCluster } from '../test/reliability/support/redis-servers';

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
  /** Round trip + both floors measured this many times, alternately; the ratios are medians over the pairs. */
  pairs: number;
  /** Masters of each local Redis Cluster the round trip runs on; empty with --no-cluster. */
  clusterMasters: number[];
  clusterRuns: number;
  logLevel: string;
  out: string;
  quick: boolean;
  strict: boolean;
  cpuProf?: string;
}

export const APPROVER_TOKEN = 'bench-approver-token-0123456789';
/** alice starts the runs (an operator of the `ops` agent); bench-approver decides them. */
export const REQUESTER_TOKEN = 'bench-requester-token-0123456789';
/** The workers' machine client, the one caller the ops MCP server lets in. */
const OPS_MCP_TOKEN = 'bench-agent-worker-token-0123456789';
/** The MCP gateway's own principal (an approvals client acting for alice). */
const GATEWAY_TOKEN = 'bench-mcp-gateway-token-0123456789';
export const PRINCIPALS_CONFIG = JSON.stringify({
  principals: [
    { id: 'alice', name: 'Bench requester', tokens: [{ sha256: tokenSha256(REQUESTER_TOKEN) }] },
    { id: 'bench-approver', name: 'Bench approver', tokens: [{ sha256: tokenSha256(APPROVER_TOKEN) }] },
    {
      id: 'agent-worker',
      name: 'Bench agent workers',
      kind: 'machine',
      tokens: [{ sha256: tokenSha256(OPS_MCP_TOKEN) }],
    },
    {
      id: 'mcp-gateway',
      name: 'Bench MCP gateway',
      kind: 'machine',
      roles: ['approvals-client'],
      actAs: ['alice'],
      tokens: [{ sha256: tokenSha256(GATEWAY_TOKEN) }],
    },
  ],
});
/** The gateway fronts the ops MCP server with its tools under their own names, alice may call them all. */
const GATEWAY_CONFIG = JSON.stringify({
  mcpServers: {
    ops: {
      transport: 'http',
      url: { $env: 'OPS_MCP_URL' },
      headers: { Authorization: { $secret: 'OPS_MCP_TOKEN', prefix: 'Bearer ' } },
      prefix: '',
      tiers: { 'get_*': 'auto', 'list_*': 'auto', '*': 'confirm' },
    },
  },
  roles: { operator: { allow: ['tool:*'] } },
  users: { alice: ['operator'] },
});
/**
 * The bench starts and decides thousands of runs a minute as one principal from one address, far past the defaults
 * for real use. The limits stay on (each run start and decision is counted, as in production), set far higher.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_RUN_STARTS: '1000000/1m',
  RATE_LIMIT_RUN_STARTS_ADDRESS: '1000000/1m',
  RATE_LIMIT_DECISIONS: '1000000/1m',
  RATE_LIMIT_DECISIONS_ADDRESS: '1000000/1m',
  // The gateway-overhead phase's calls through the MCP gateway, one principal.
  RATE_LIMIT_SESSION_OPENS: '1000000/1m',
  RATE_LIMIT_TOOL_CALLS: '1000000/1m',
};
export const APPROVALS_CONFIG = JSON.stringify({
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
  const masters = value('cluster-masters') ?? '1,3';
  const clusterMasters = flag('no-cluster') ? [] : masters.split(',').map(Number);
  if (clusterMasters.some((n) => !Number.isInteger(n) || n < 1 || n > 6))
    throw new Error(`--cluster-masters must be a comma-separated list of 1..6, got "${masters}"`);
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
    clusterMasters,
    clusterRuns: int('cluster-runs', quick ? 50 : 1_000),
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
  const clusters: OwnRedisCluster[] = [];
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
    await Promise.all(clusters.map((c) => c.stop()));
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
    log(
      'starting the approval service, one agent worker and the floors (bare: a worker; contract: a worker and an approval stand-in)',
    );
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
    const contract = await startContractFloor({
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: env.QUEUE_PREFIX,
      CONCURRENCY: String(options.workerConcurrency),
    });
    spawned(contract.worker);
    spawned(contract.approval);
    await Promise.all([
      allHealthy([approval, ...workers]),
      waitReady(floorWorker),
      waitReady(contract.worker),
      waitReady(contract.approval),
    ]);

    /** How the approver stand-in drives every round trip, the contract floor's and the cluster's alike. */
    const standIn = {
      approverToken: APPROVER_TOKEN,
      requesterToken: REQUESTER_TOKEN,
      startConcurrency: options.concurrency,
      decideConcurrency: options.concurrency,
    };
    /** Round trips over `over` (by default every worker started so far). */
    const roundTrip = (label: string, runs: number, quiet = false, over: Child[] = workers) =>
      roundTrips({
        label,
        runs,
        workers: over,
        approvalUrl: approval.url!,
        ...standIn,
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

    // The contract floor is driven exactly like the round trip (same stand-in, same HTTP client and SSE reader):
    // only the processes behind the URLs differ.
    const contractFloorRun = (label: string, runs: number, quiet = false) =>
      roundTrips({
        label,
        runs,
        workers: [contract.worker],
        approvalUrl: contract.approval.url!,
        ...standIn,
        quiet,
        redis,
        executedTool: FLOOR_TOOL,
      });

    log(`warming up (${options.warmup} round trips and ${options.warmup} runs of each floor, not recorded)`);
    await roundTrip('warm-up', options.warmup, true);
    await floorRun('warm-up', options.warmup, true);
    await contractFloorRun('warm-up', options.warmup, true);

    // Alternating pairs: the floors move as much as Countersign does from one minute to the next on a shared
    // VM, so each ratio compares phases measured back to back, and the reported ratios are medians.
    const pairs: Pair[] = [];
    for (let i = 1; i <= options.pairs; i++) {
      const of = options.pairs > 1 ? ` (pair ${i} of ${options.pairs})` : '';
      const rt = await roundTrip(`round trips, 1 worker${of}`, options.runs);
      const fl = await floorRun(`floor (bare BullMQ)${of}`, options.runs);
      const cf = await contractFloorRun(`floor (contract)${of}`, options.runs);
      pairs.push({ roundTrip: rt, floor: fl, contractFloor: cf });
    }
    const {
      roundTrip: countersign,
      floor: floorResult,
      contractFloor: contractFloorResult,
    } = medianPair(pairs);
    await stopAll([floorWorker, contract.worker, contract.approval]);

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
    await mcpWorker.stop();

    log('starting the MCP gateway, and a bare MCP proxy (its floor), in front of the same ops MCP server');
    const gateway = spawned(
      await startMcpGateway(mcpEnv, {
        ...BENCH_RATE_LIMITS,
        GATEWAY_CONFIG,
        GATEWAY_TOKEN,
        APPROVAL_SERVICE_URL: approval.url!,
        OPS_MCP_URL: opsServerUrl,
        OPS_MCP_TOKEN,
      }),
    );
    const bareProxy = spawned(await startBareMcpProxy(opsServerUrl, OPS_MCP_TOKEN));
    await allHealthy([gateway, bareProxy]);
    const viaGateway = await gatewayOverhead({
      gatewayUrl: `${gateway.url}/mcp`,
      gatewayClientToken: REQUESTER_TOKEN,
      bareProxyUrl: `${bareProxy.url}/mcp`,
      opsServerUrl,
      opsServerToken: OPS_MCP_TOKEN,
      repeats: options.autoRepeats,
      calls: 100,
    });
    await stopAll([gateway, bareProxy, opsServer]);

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

    const cluster: ClusterRoundTrip[] | { skipped: string } = options.clusterMasters.length
      ? await clusterRoundTrips({
          masters: options.clusterMasters,
          runs: options.clusterRuns,
          warmup: options.warmup,
          log,
          onCluster: (c) => clusters.push(c),
          startServices: async (clusterNodes, shards) => {
            // REDIS_URL stays required by the config; the services use the cluster when REDIS_CLUSTER_NODES is set.
            const clusterEnv = {
              ...env,
              REDIS_CLUSTER_NODES: clusterNodes,
              QUEUE_SHARDS: String(shards),
              AUDIT_SHARDS: String(shards),
              APPROVAL_SHARDS: String(shards),
            };
            const services = {
              approval: spawned(
                await startApprovalService(clusterEnv, {
                  approvalsConfig: APPROVALS_CONFIG,
                  linkSecret: 'bench-link-secret-0123456789',
                }),
              ),
              worker: spawned(
                await startWorker('cluster', clusterEnv, { concurrency: options.workerConcurrency }),
              ),
            };
            await allHealthy([services.approval, services.worker]);
            return services;
          },
          roundTrip: standIn,
        })
      : { skipped: '--no-cluster' };

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
      contractFloor: contractFloorResult,
      ...verdicts(pairs, parked, auto, mcp, viaGateway),
      cluster,
      pairs: pairs.map(summarizePair),
      scaleOut: scaleOut.map((s) => ({ workers: s.workers, ...s.result })),
      parked: { ...parked, measuredOn: parkedOn },
      autoOverhead: auto,
      mcpOverhead: mcp,
      gatewayOverhead: viaGateway,
      definitions: {
        decisionToExecution:
          'from the moment the approver stand-in starts sending its decision (HTTP POST for Countersign and the ' +
          'contract floor, queue add for the bare floor) to the moment the worker enters the tool handler ' +
          '(ToolCallPipeline.execute, reported by a probe preloaded into the worker process only by the bench; the ' +
          "floors' decision handler); both are wall-clock times " +
          '(performance.timeOrigin + performance.now()) of processes on one machine',
        throughput: 'runs / (last run finished − first run started)',
        contractFloor:
          'bench/floor-worker.ts (FLOOR_KIND=contract: POST /runs with node:http, then the bare floor queue hops) and ' +
          'bench/floor-approval.ts (request job → SSE push on GET /inbox/events; POST /approvals/:id/decisions → ' +
          'decision job), driven by the same stand-in as the round trip; no state, policy, audit or auth',
        clusterCommandShares:
          'per master: (INFO commandstats calls after − before, INFO itself left out) / the same over all masters',
        parked:
          'INFO used_memory after − before, over the runs; completed start jobs (BullMQ retention) cleaned first',
        mcpOverhead:
          '(run with N auto MCP calls − run with none) / N through a worker on config/agents.json, minus the same ' +
          'tool of the same ops MCP server called N times by an MCP client of the bench, same concurrency (4)',
        gatewayOverhead:
          '(N auto calls through the MCP gateway − the same N calls to the ops MCP server directly) / N, one call at ' +
          'a time, each by an MCP client of the bench (streamable HTTP); median over the repeats, rotating which ' +
          'goes first. extraHop: the same through a bare MCP proxy (the SDK transports, nothing else); gatewayWork: ' +
          'gateway − bare proxy',
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

// `npm run bench`: end-to-end benchmarks of Countersign on a private redis-server — approval round trips against two
// floors (bare BullMQ; bare BullMQ plus the contract's HTTP and SSE hops) and, with --peers, two other frameworks'
// approval loops, in alternating pairs, with the CPU per round trip of every process, Redis commands and bytes; the
// open-loop latency at fixed rates; the sequential Redis trips of the decision path; the round trip on a local Redis
// Cluster; scale-out over worker processes; Redis memory of parked runs; the auto-tier overhead; and the overhead of an
// auto MCP call through the worker and through the MCP gateway.
// Prints the tables with each target's verdict and writes bench/results.json. `--quick` is a smoke-sized run; `--help`
// lists the flags. See bench/README.md.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { deletePrefixedKeys, uniquePrefixes, type TestPrefixes } from '../test/support/redis';
import { OwnRedisCluster } from '../test/reliability/support/redis-servers';
import { FLOOR_TOOL } from './floor-worker';
import { parseArgs, USAGE, type BenchOptions } from './options';
import { PEER_TOOL, PEERS, type PeerName } from './peers/peer-worker';
import { createPeerDatabase, type PeerDatabase } from './peers/postgres';
import { autoOverhead } from './phases/auto-overhead';
import { BENCH_POLICY_COUNT, writeCedarAgentsConfig } from './support/cedar-policy-set';
import { clusterRoundTrips } from './phases/cluster';
import { floor, type FloorResult } from './phases/floor';
import { gatewayOverhead } from './phases/gateway-overhead';
import { agentsConfigWithHook, hookOverhead, hookWorkerEnv, startAllowHook } from './phases/hook-overhead';
import { mcpOverhead } from './phases/mcp-overhead';
import { parkRuns } from './phases/parked';
import { roundTrips, type RoundTripResult } from './phases/round-trip';
import {
  type ClusterRoundTrip,
  type OpenLoopResult,
  type OpenLoopSample,
  type Pair,
  printTables,
  summarizeOpenLoop,
  summarizePair,
  verdicts,
} from './report';
import { BenchSetupError, reachRedis, runMain, wantsHelp, withoutPassword } from './support/cli';
import { CLOCK_TICKS, CostMeter, DRIVER, type ProcessGroup } from './support/cost';
import { describeMachine, medianOf } from './support/measure';
import { PRODUCTION_PREFIXES, siblingPrefixes } from './support/prefixes';
import { REDIS_SERVER, startPrivateRedis } from './support/private-redis';
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
  startPeerWorker,
  startWorker,
  waitReady,
} from './support/processes';
import {
  APPROVALS_CONFIG,
  APPROVER_TOKEN,
  BENCH_RATE_LIMITS,
  GATEWAY_CONFIG,
  GATEWAY_TOKEN,
  OPS_MCP_TOKEN,
  PRINCIPALS_CONFIG,
  REQUESTER_TOKEN,
} from './support/services-config';
import { medianTrips, oneHttpRun, type TripsSummary } from './support/trips';

const log = (message: string) => console.log(`[bench] ${message}`);

/** The Redis the round-trip phases run on: a private redis-server (its PID read for CPU) or --redis-url's. */
interface BenchRedis {
  url: string;
  pid?: number;
  measuredOn: string;
  settings?: string[];
  stop(): Promise<void>;
}

async function openBenchRedis(options: BenchOptions): Promise<BenchRedis> {
  if (options.redisUrl) {
    await reachRedis(options.redisUrl);
    return {
      url: options.redisUrl,
      measuredOn: `the Redis at ${withoutPassword(options.redisUrl)} (--redis-url: its CPU not read, every client's commands count)`,
      stop: async () => undefined,
    };
  }
  const server = await startPrivateRedis().catch((error: Error) => {
    throw new BenchSetupError(`the private redis-server did not start: ${error.message.split('\n')[0]}`);
  });
  if (!server)
    throw new BenchSetupError(
      `no redis-server to start (${REDIS_SERVER} does not run): install redis-server, set REDIS_SERVER_BIN, or ` +
        'measure on another Redis with --redis-url URL',
    );
  return {
    url: server.url,
    pid: server.pid,
    measuredOn: `private redis-server ${server.url}`,
    settings: server.settings,
    stop: server.stop,
  };
}

/** A started peer: its worker process, and for LangGraph the database whose backends count as Postgres. */
interface PeerProcess {
  worker: Child;
  database?: PeerDatabase;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (wantsHelp(argv)) return void console.log(USAGE);
  const options = parseArgs(argv);
  if (process.env.REDIS_URL && !options.redisUrl)
    log(
      'REDIS_URL is set but not used: the bench starts its own redis-server (--redis-url URL to measure on another)',
    );
  const benchRedis = await openBenchRedis(options);
  profileChildrenInto(options.cpuProf);
  const redisUrl = benchRedis.url;
  const redis = new Redis(redisUrl);
  const machine = await describeMachine(redis);
  const onPrivateRedis = benchRedis.pid !== undefined;
  // Nobody else uses a private server, so Countersign gets the production prefixes: key names are part of the bytes
  // sent to Redis, and a test prefix is 10 characters longer than `countersign`. Each floor and peer gets prefixes of
  // the same length (support/prefixes.ts), under the same queue names.
  const main: TestPrefixes = onPrivateRedis ? PRODUCTION_PREFIXES : uniquePrefixes('bench');
  const prefixesOf = {
    bareFloor: siblingPrefixes(main, 'bare-floor', !onPrivateRedis),
    contractFloor: siblingPrefixes(main, 'contract', !onPrivateRedis),
    langgraph: siblingPrefixes(main, 'langgraph', !onPrivateRedis),
    'openai-agents': siblingPrefixes(main, 'agents-sdk', !onPrivateRedis),
  };
  const mcpPrefixes: TestPrefixes = onPrivateRedis
    ? { keyPrefix: 'countersign-mcp', queuePrefix: '{countersign-mcp}' }
    : uniquePrefixes('bench-mcp');
  const hookPrefixes: TestPrefixes = onPrivateRedis
    ? { keyPrefix: 'countersign-hook', queuePrefix: '{countersign-hook}' }
    : uniquePrefixes('bench-hook');
  const cedarPrefixes: TestPrefixes = onPrivateRedis
    ? { keyPrefix: 'countersign-cedar', queuePrefix: '{countersign-cedar}' }
    : uniquePrefixes('bench-cedar');
  let parkedPrefixes = uniquePrefixes('bench-parked');
  const children: Child[] = [];
  const peerDatabases: PeerDatabase[] = [];
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
    for (const database of peerDatabases) await database.drop().catch(() => undefined);
    if (onPrivateRedis) {
      redis.disconnect();
      await benchRedis.stop();
      log('stopped the private redis-server');
    } else {
      const owned = [
        main,
        mcpPrefixes,
        hookPrefixes,
        cedarPrefixes,
        ...Object.values(prefixesOf),
        ...(stopParkedRedis ? [] : [parkedPrefixes]),
      ];
      let deleted = 0;
      for (const prefixes of owned) deleted += await deletePrefixedKeys(prefixes, redisUrl);
      log(
        `cleaned up ${deleted.toLocaleString('en-US')} keys under ${owned.map((p) => p.keyPrefix).join(', ')}`,
      );
    }
    await stopParkedRedis?.();
  };
  process.once('SIGINT', () => {
    log('interrupted: stopping children and cleaning up');
    void cleanUp().finally(() => process.exit(130));
  });

  log(
    `node ${machine.node}, redis ${machine.redis}, ${machine.cores} × ${machine.cpuModel}, load ${machine.loadAverage1mAtStart}`,
  );
  log(
    `round trips on ${benchRedis.measuredOn}${benchRedis.settings ? ` (${benchRedis.settings.join(' ')})` : ''}`,
  );
  log(
    `runs ${options.runs}, pairs ${options.pairs}, workers ${options.workerCounts.join('/')}, parked ${options.parked}, ` +
      `concurrency ${options.concurrency}`,
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
    const floorEnv = (p: TestPrefixes) => ({
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: p.queuePrefix,
      KEY_PREFIX: p.keyPrefix,
      CONCURRENCY: String(options.workerConcurrency),
    });
    const floorWorker = spawned(startFloorWorker(floorEnv(prefixesOf.bareFloor)));
    const contract = await startContractFloor(floorEnv(prefixesOf.contractFloor));
    spawned(contract.worker);
    spawned(contract.approval);
    const peers = options.peers ? await startPeers(options, (peer) => floorEnv(prefixesOf[peer])) : {};
    for (const peer of Object.values(peers)) {
      if ('worker' in peer) spawned(peer.worker);
      if ('database' in peer && peer.database) peerDatabases.push(peer.database); // dropped even if a start fails
    }
    await Promise.all([
      allHealthy([approval, ...workers]),
      waitReady(floorWorker),
      waitReady(contract.worker),
      waitReady(contract.approval),
      ...Object.values(peers).map((p) => ('worker' in p ? waitReady(p.worker) : undefined)),
    ]);

    // Who counts in each phase's CPU: its own processes, Redis when the bench started it, and the bench itself.
    const redisGroup: ProcessGroup[] = onPrivateRedis
      ? [{ role: 'redis', pids: () => [benchRedis.pid!] }]
      : [];
    const meterOf = (worker: Child[], approvalChild?: Child, extra: ProcessGroup[] = []) =>
      new CostMeter(redis, [
        { role: 'worker', pids: () => worker.map((c) => c.pid) },
        ...(approvalChild ? [{ role: 'approval' as const, pids: () => [approvalChild.pid] }] : []),
        ...redisGroup,
        ...extra,
        DRIVER,
      ]);

    /** How the approver stand-in drives every round trip, the contract floor's and the cluster's alike. */
    const standIn = {
      approverToken: APPROVER_TOKEN,
      requesterToken: REQUESTER_TOKEN,
      startConcurrency: options.concurrency,
      decideConcurrency: options.concurrency,
    };
    /** Round trips over `over` (by default every worker started so far). */
    const roundTrip = (
      label: string,
      runs: number,
      quiet = false,
      over: Child[] = workers,
      openLoopRate?: number,
    ) =>
      roundTrips({
        label,
        runs,
        workers: over,
        approvalUrl: approval.url!,
        ...standIn,
        quiet,
        redis,
        meter: meterOf(over, approval),
        openLoopRate,
      });
    /** Bare queue hops: the bare floor's worker, or a peer's (its queues, its tool, its Postgres backends). */
    const queueHops = (label: string, runs: number, quiet: boolean, peer?: PeerName) => {
      const peerProcess = peer ? (peers[peer] as PeerProcess) : undefined;
      const worker = peerProcess?.worker ?? floorWorker;
      const database = peerProcess?.database;
      const postgres: ProcessGroup[] = database
        ? [{ role: 'postgres', pids: () => database.backendPids() }]
        : [];
      return floor({
        label,
        runs,
        worker,
        redisUrl,
        queuePrefix: (peer ? prefixesOf[peer] : prefixesOf.bareFloor).queuePrefix,
        startConcurrency: options.concurrency,
        decideConcurrency: options.concurrency,
        quiet,
        commandsRedis: redis,
        executedTool: peer ? PEER_TOOL : FLOOR_TOOL,
        meter: meterOf([worker], undefined, postgres),
      });
    };
    const floorRun = (label: string, runs: number, quiet = false) => queueHops(label, runs, quiet);
    // A peer's figures are its job's only when every run completed: a failed run is a bug of its loop, shown with
    // the peer's output (the catch below) rather than measured.
    const peerRun = async (peer: PeerName, label: string, runs: number, quiet = false) => {
      const result = await queueHops(label, runs, quiet, peer);
      if (result.failed > 0)
        throw new Error(`peer ${peer}: ${result.failed} of ${runs} runs failed (${label})`);
      return result;
    };

    // The contract floor is driven exactly like the round trip (same stand-in, same HTTP client and SSE reader):
    // only the processes behind the URLs differ.
    const contractFloorRun = (label: string, runs: number, quiet = false, openLoopRate?: number) =>
      roundTrips({
        label,
        runs,
        workers: [contract.worker],
        approvalUrl: contract.approval.url!,
        ...standIn,
        quiet,
        redis,
        executedTool: FLOOR_TOOL,
        meter: meterOf([contract.worker], contract.approval),
        openLoopRate,
      });
    const runningPeers = PEERS.filter((p) => peers[p] && 'worker' in peers[p]);

    log(
      `warming up (${options.warmup} round trips and ${options.warmup} runs of each floor and peer, not recorded)`,
    );
    await roundTrip('warm-up', options.warmup, true);
    await floorRun('warm-up', options.warmup, true);
    await contractFloorRun('warm-up', options.warmup, true);
    for (const peer of runningPeers) await peerRun(peer, 'warm-up', options.warmup, true);

    // Alternating pairs: every process's figures move from one minute to the next on a shared VM, so each ratio
    // compares phases run back to back, and every figure reported is a median over the pairs.
    const pairs: Pair[] = [];
    for (let i = 1; i <= options.pairs; i++) {
      const of = options.pairs > 1 ? ` (pair ${i} of ${options.pairs})` : '';
      const rt = await roundTrip(`round trips, 1 worker${of}`, options.runs);
      const fl = await floorRun(`floor (bare BullMQ)${of}`, options.runs);
      const cf = await contractFloorRun(`floor (contract)${of}`, options.runs);
      const peerResults: Pair['peers'] = {};
      for (const peer of runningPeers)
        peerResults[peer] = await peerRun(peer, `peer: ${peer}${of}`, options.runs);
      pairs.push({ roundTrip: rt, floor: fl, contractFloor: cf, peers: peerResults });
    }

    const openLoop: OpenLoopResult[] = [];
    for (const rate of options.openLoopRates) {
      const runs = Math.max(1, Math.round(rate * options.openLoopSeconds));
      const samples: OpenLoopSample[] = [];
      for (let i = 1; i <= options.openLoopPairs; i++) {
        const of = options.openLoopPairs > 1 ? ` (${i} of ${options.openLoopPairs})` : '';
        samples.push({
          countersign: await roundTrip(`open loop ${rate}/s${of}`, runs, false, workers, rate),
          contractFloor: await contractFloorRun(
            `open loop ${rate}/s, contract floor${of}`,
            runs,
            false,
            rate,
          ),
        });
      }
      openLoop.push(summarizeOpenLoop(rate, runs, samples));
    }

    let trips: { countersign: TripsSummary; contractFloor: TripsSummary } | { skipped: string };
    if (onPrivateRedis) {
      log(
        `counting sequential Redis trips under MONITOR (${options.tripSamples} run(s) of Countersign and of the contract floor)`,
      );
      trips = {
        countersign: await medianTrips(
          redisUrl,
          () => oneHttpRun(workers[0], approval.url!),
          options.tripSamples,
        ),
        contractFloor: await medianTrips(
          redisUrl,
          () => oneHttpRun(contract.worker, contract.approval.url!),
          options.tripSamples,
        ),
      };
    } else trips = { skipped: 'not on a private redis-server: MONITOR would show other clients too' };
    await stopAll([
      floorWorker,
      contract.worker,
      contract.approval,
      ...runningPeers.map((p) => (peers[p] as PeerProcess).worker),
    ]);
    for (const database of peerDatabases.splice(0)) await database.drop();

    const auto = await autoOverhead({
      worker: workers[0],
      redisUrl,
      keyPrefix: env.KEY_PREFIX,
      requesterToken: REQUESTER_TOKEN,
      repeats: options.autoRepeats,
      calls: 100,
    });

    // The same through a worker whose auto tool has a before-hook (its own prefixes, like the MCP worker's below).
    log('starting a local admission hook (allow) and a worker whose get_service_status asks it first');
    const allowHook = await startAllowHook();
    const hookEnv = envOf(hookPrefixes);
    let hook;
    try {
      const hookWorker = spawned(
        await startWorker('hook', hookEnv, {
          concurrency: options.workerConcurrency,
          agentsConfig: agentsConfigWithHook('test/support/agents.json', allowHook.url),
          extraEnv: hookWorkerEnv,
        }),
      );
      await allHealthy([hookWorker]);
      hook = await hookOverhead({
        worker: hookWorker,
        hook: allowHook,
        without: auto,
        redisUrl,
        keyPrefix: hookEnv.KEY_PREFIX,
        requesterToken: REQUESTER_TOKEN,
        repeats: options.autoRepeats,
        calls: 100,
      });
      await hookWorker.stop();
    } finally {
      await allowHook.stop();
    }
    // The same auto calls with a Cedar set of 50 policies answering in RBAC's place (issue 28), on prefixes of its own.
    log(`starting a worker whose agents answer with a Cedar policy set of ${BENCH_POLICY_COUNT} policies`);
    const cedarEnv = envOf(cedarPrefixes);
    const cedarWorker = spawned(
      await startWorker('cedar', cedarEnv, {
        concurrency: options.workerConcurrency,
        agentsConfig: writeCedarAgentsConfig(),
      }),
    );
    await allHealthy([cedarWorker]);
    const cedarAuto = await autoOverhead({
      worker: cedarWorker,
      redisUrl,
      keyPrefix: cedarEnv.KEY_PREFIX,
      requesterToken: REQUESTER_TOKEN,
      repeats: options.autoRepeats,
      calls: 100,
      label: `auto-tier overhead, Cedar (${BENCH_POLICY_COUNT} policies)`,
    });
    await cedarWorker.stop();

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

    const countersign = medianOf(pairs.map((p) => p.roundTrip));
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
    let parkedOn: { redis: string; composeSettings?: string[] } = { redis: 'shared (--redis-url)' };
    if (privateRedis) {
      parkedRedisUrl = privateRedis.url;
      stopParkedRedis = privateRedis.stop;
      parkedOn = { redis: `private redis-server ${parkedRedisUrl}`, composeSettings: privateRedis.settings };
      parkedPrefixes = PRODUCTION_PREFIXES;
      log(
        `parked runs on a private redis-server with docker-compose.yml's settings: ${privateRedis.settings.join(' ')}`,
      );
    } else {
      log(
        'no redis-server binary: parked runs measured on --redis-url (its own settings, other clients count)',
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

    const peerResults = options.peers
      ? Object.fromEntries(
          PEERS.map((peer) => {
            const p = peers[peer]!;
            return [peer, 'skipped' in p ? p : medianOf(pairs.map((pair) => pair.peers[peer]!))];
          }),
        )
      : { skipped: 'not asked for (--peers)' };
    const results = {
      timestamp: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { ...machine, loadAverage1mAtEnd: Number(loadavg()[0].toFixed(2)) },
      options: {
        ...options,
        out: undefined,
        postgresUrl: withoutPassword(options.postgresUrl),
        redisUrl: options.redisUrl && withoutPassword(options.redisUrl),
      },
      redis: { measuredOn: benchRedis.measuredOn, settings: benchRedis.settings, cpuRead: onPrivateRedis },
      cpu: { clockTicksPerSecond: CLOCK_TICKS },
      roundTrip: countersign,
      floor: medianOf(pairs.map((p) => p.floor)),
      contractFloor: medianOf(pairs.map((p) => p.contractFloor)),
      peers: peerResults as Record<PeerName, FloorResult | { skipped: string }> | { skipped: string },
      ...verdicts({
        pairs,
        openLoop,
        trips: 'skipped' in trips ? trips : { countersign: trips.countersign },
        parked,
        auto,
        mcp,
        gateway: viaGateway,
        redisCpuMissing: onPrivateRedis ? undefined : 'Redis not started by the bench (--redis-url)',
      }),
      openLoop,
      trips,
      cluster,
      pairs: pairs.map(summarizePair),
      scaleOut: scaleOut.map((s) => ({ workers: s.workers, ...s.result })),
      parked: { ...parked, measuredOn: parkedOn },
      autoOverhead: auto,
      hookOverhead: hook,
      cedarOverhead: cedarAuto,
      mcpOverhead: mcp,
      gatewayOverhead: viaGateway,
      definitions: DEFINITIONS,
    };
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    printTables(results);
    log(`results written to ${options.out}`);
    if (options.strict && Object.values(results.targets).some((t) => t.pass !== true)) process.exitCode = 1;
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

/** Each peer's worker started, or why it was not (LangGraph needs a PostgreSQL it can create a database on). */
async function startPeers(
  options: BenchOptions,
  envOf: (peer: PeerName) => {
    REDIS_URL: string;
    QUEUE_PREFIX: string;
    KEY_PREFIX: string;
    CONCURRENCY: string;
  },
): Promise<Partial<Record<PeerName, PeerProcess | { skipped: string }>>> {
  const peers: Partial<Record<PeerName, PeerProcess | { skipped: string }>> = {};
  const database = await createPeerDatabase(options.postgresUrl);
  if ('skipped' in database) {
    log(`LangGraph peer skipped: ${database.skipped}`);
    peers.langgraph = database;
  } else {
    log(`LangGraph peer: database ${new URL(database.url).pathname.slice(1)} (dropped at the end)`);
    const worker = startPeerWorker('langgraph', {
      ...envOf('langgraph'),
      PG_URL: database.url,
      PG_APPLICATION_NAME: database.applicationName,
    });
    peers.langgraph = { worker, database };
  }
  peers['openai-agents'] = { worker: startPeerWorker('openai-agents', envOf('openai-agents')) };
  return peers;
}

const DEFINITIONS = {
  cpuMsPerRun:
    'utime + stime (fields 14 and 15 of /proc/<pid>/stat, in clock ticks, all threads) of each process the bench ' +
    'started for the phase, read before its first run and 250 ms after its last, (after − before) / runs, by role: ' +
    'worker (the agent worker; a floor or peer worker), approval (the approval service; the contract floor stand-in), ' +
    "redis (the private redis-server), postgres (the backends serving the LangGraph peer's connections), driver (the " +
    'bench process itself: HTTP client, SSE reader, queue stand-ins, /proc/self/stat)',
  redisBytesPerRun:
    'INFO stats total_net_input_bytes (in) and total_net_output_bytes (out), (after − before) / runs',
  decisionToExecution:
    'from the moment the approver stand-in starts sending its decision (HTTP POST for Countersign and the ' +
    'contract floor, queue add for the bare floor and the peers) to the moment the worker enters the tool handler ' +
    '(ToolCallPipeline.execute, reported by a probe preloaded into the worker process only by the bench; the ' +
    "floors' decision handler; the peers' tool) both wall-clock times " +
    '(performance.timeOrigin + performance.now()) of processes on one machine',
  openLoop:
    'runs started at fixed times (i / rate), none waiting for another; the stand-in decides each request as it ' +
    'hears of it; startLag: how late each start was against its schedule',
  trips:
    "bench:monitor's count (support/trips.ts): one run at a time under MONITOR on the private server, a client's " +
    "command within 30 µs of the end of its previous one in the same trip, Lua's commands and background polls " +
    'left out; the median over the samples',
  throughput: 'runs / (last run finished − first run started)',
  contractFloor:
    'bench/floor-worker.ts (FLOOR_KIND=contract: POST /runs with node:http, then the bare floor queue hops) and ' +
    'bench/floor-approval.ts (request job → SSE push on GET /inbox/events; POST /approvals/:id/decisions → ' +
    'decision job), driven by the same stand-in as the round trip; no state, policy, audit or auth',
  peers:
    "bench/peers/: a worker process running another framework's approval loop behind the bare floor's queue hops " +
    '(start job → request job → the stand-in adds a decision job → resume), a scripted model, one tool call per run',
  clusterCommandShares:
    'per master: (INFO commandstats calls after − before, INFO itself left out) / the same over all masters',
  parked:
    'INFO used_memory after − before, over the runs; completed start jobs (BullMQ retention) cleaned first',
  hookOverhead:
    'the auto-tier measurement again through a worker whose get_service_status has an admission before-hook (a ' +
    'local HTTP server of the bench answering allow at once), minus the one without; worker CPU per call: ' +
    'utime + stime of the worker around each timed run, (median with calls − median empty run) / N',
  mcpOverhead:
    '(run with N auto MCP calls − run with none) / N through a worker on config/agents.json, minus the same ' +
    'tool of the same ops MCP server called N times by an MCP client of the bench, same concurrency (4)',
  gatewayOverhead:
    '(N auto calls through the MCP gateway − the same N calls to the ops MCP server directly) / N, one call at ' +
    'a time, each by an MCP client of the bench (streamable HTTP); median over the repeats, rotating which ' +
    'goes first. extraHop: the same through a bare MCP proxy (the SDK transports, nothing else); gatewayWork ' +
    '(the target): gateway − bare proxy',
};

if (require.main === module) runMain('bench', main);

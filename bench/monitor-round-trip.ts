// `npm run bench:monitor`: the Redis commands of ONE approval round trip, and of one run of each floor, as Redis's
// MONITOR sees them on a private redis-server (nobody else's commands), counted as sequential round trips
// (support/trips.ts). Counts the whole run and the decision path (the decision sent → the tool handler entered).
// bench/README.md quotes it; `npm run bench` judges the decision path's count with the same code.
import { Redis } from 'ioredis';
import { FLOOR_TOOL } from './floor-worker';
import { roundTrips } from './phases/round-trip';
import { breakdownOf, formatBreakdown } from './support/breakdown';
import { BenchSetupError, checkFlags, runMain, wantsHelp } from './support/cli';
import { PRODUCTION_PREFIXES, siblingPrefixes } from './support/prefixes';
import { REDIS_SERVER, startPrivateRedis } from './support/private-redis';
import {
  allHealthy,
  type Child,
  startApprovalService,
  startContractFloor,
  startFloorWorker,
  startWorker,
  waitReady,
} from './support/processes';
import {
  APPROVALS_CONFIG,
  APPROVER_TOKEN,
  BENCH_RATE_LIMITS,
  PRINCIPALS_CONFIG,
  REQUESTER_TOKEN,
} from './support/services-config';
import { monitorOneRun, oneBareFloorRun, oneHttpRun, type RunWindow, type TripCount } from './support/trips';

const USAGE = `Usage: npm run bench:monitor [-- --verbose] [-- --whole-run] [-- --breakdown N]

Starts a private redis-server (${REDIS_SERVER}; REDIS_SERVER_BIN to use another), the approval service, an agent
worker and both floors on it, warms them up, then runs ONE round trip and one run of each floor under MONITOR and
counts the sequential Redis trips of the whole run and of the decision path (decision sent → tool handler entered).

  --verbose    list every command of the decision path (* = a new trip of that client)
  --whole-run  list every command of the whole run
  --breakdown N  then N Countersign round trips (closed loop, concurrency 16) under MONITOR: every command (those in
               Lua too) and the bytes sent, per run, by origin (BullMQ queue and script, own script, key), beside
               INFO commandstats and total_net_input_bytes around the same batch (with --verbose: an example of each)
  --help       this text (starts nothing)`;

const log = (message: string) => console.log(`[monitor] ${message}`);

function print(label: string, counted: { wholeRun: TripCount; decisionToTool: TripCount }): void {
  const { wholeRun: whole, decisionToTool: decision } = counted;
  log(
    `${label}: whole run ${whole.trips} sequential trips (${whole.commands} commands outside Lua, ` +
      `${whole.ms.toFixed(1)} ms); decision → tool ${decision.trips} trips ` +
      `(${decision.commands} commands, ${decision.ms.toFixed(1)} ms)`,
  );
  log(
    `${label}, decision → tool trips by connection: ${decision.byClient.map(([n, t]) => `${n} ${t}`).join(', ')}`,
  );
  if (process.argv.includes('--verbose')) {
    log(`${label}, decision → tool (* = a new trip of that client):`);
    for (const line of decision.lines) console.log(`  ${line}`);
  }
  if (process.argv.includes('--whole-run')) {
    log(`${label}, whole run (* = a new trip of that client):`);
    for (const line of whole.lines) console.log(`  ${line}`);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (wantsHelp(argv)) return void console.log(USAGE);
  checkFlags(argv, { flags: ['verbose', 'whole-run'], values: ['breakdown'] });
  const breakdownAt = argv.indexOf('--breakdown');
  const breakdownRuns = breakdownAt >= 0 ? Number(argv[breakdownAt + 1]) : 0;
  if (breakdownAt >= 0 && !(Number.isInteger(breakdownRuns) && breakdownRuns > 0))
    throw new BenchSetupError(`--breakdown wants a number of runs, not ${argv[breakdownAt + 1]}`);
  const server = await startPrivateRedis();
  if (!server)
    throw new BenchSetupError(
      `no redis-server to start (${REDIS_SERVER} does not run; install redis-server or set REDIS_SERVER_BIN)`,
    );
  const children: Child[] = [];
  try {
    const env = {
      REDIS_URL: server.url,
      QUEUE_PREFIX: PRODUCTION_PREFIXES.queuePrefix,
      KEY_PREFIX: PRODUCTION_PREFIXES.keyPrefix,
      DECISION_SIGNING_SECRET: 'bench-decision-secret-0123456789',
      AUDIT_SIGNING_SECRET: 'bench-audit-signing-secret-0123456789abcdef',
      PRINCIPALS_CONFIG,
      LOG_LEVEL: 'warn',
      ...BENCH_RATE_LIMITS,
    };
    log(`private redis-server ${server.url}; starting the approval service, a worker and both floors`);
    const approval = await startApprovalService(env, {
      approvalsConfig: APPROVALS_CONFIG,
      linkSecret: 'bench-link-secret-0123456789',
    });
    const worker = await startWorker(0, env, { concurrency: 16 });
    // The floors as `npm run bench` runs them: the product's queue names under prefixes of their own.
    const bare = siblingPrefixes(PRODUCTION_PREFIXES, 'bare-floor', false);
    const floorEnv = (queuePrefix: string) => ({
      REDIS_URL: server.url,
      QUEUE_PREFIX: queuePrefix,
      CONCURRENCY: '16',
    });
    const floorWorker = startFloorWorker(floorEnv(bare.queuePrefix));
    const contract = await startContractFloor(
      floorEnv(siblingPrefixes(PRODUCTION_PREFIXES, 'contract', false).queuePrefix),
    );
    children.push(approval, worker, floorWorker, contract.worker, contract.approval);
    await Promise.all([
      allHealthy([approval, worker]),
      ...[floorWorker, contract.worker, contract.approval].map((c) => waitReady(c)),
    ]);
    const runs: [string, () => Promise<RunWindow>][] = [
      ['Countersign round trip', () => oneHttpRun(worker, approval.url!)],
      ['contract floor', () => oneHttpRun(contract.worker, contract.approval.url!)],
      ['bare floor', () => oneBareFloorRun(floorWorker, server.url, bare.queuePrefix)],
    ];
    // Warm: scripts loaded, connections open, code paths compiled.
    for (let i = 0; i < 3; i++) for (const [, run] of runs) await run();
    for (const [label, run] of runs) print(label, await monitorOneRun(server.url, run));
    if (breakdownRuns > 0) {
      const redis = new Redis(server.url);
      // Driven as `npm run bench` drives the round trip and the contract floor (same stand-in, same concurrency).
      const batch = (worker: Child, approvalUrl: string, executedTool?: string) => (n: number) => () =>
        roundTrips({
          label: 'breakdown',
          runs: n,
          workers: [worker],
          approvalUrl,
          approverToken: APPROVER_TOKEN,
          requesterToken: REQUESTER_TOKEN,
          startConcurrency: 16,
          decideConcurrency: 16,
          quiet: true,
          redis,
          executedTool,
        }).then(() => undefined);
      const batches: [string, (n: number) => () => Promise<void>][] = [
        ['Countersign round trip', batch(worker, approval.url!)],
        ['contract floor', batch(contract.worker, contract.approval.url!, FLOOR_TOOL)],
      ];
      try {
        for (const [label, of] of batches) {
          await of(Math.min(100, breakdownRuns))(); // warm at the batch's concurrency
          const counted = await breakdownOf(server.url, breakdownRuns, of(breakdownRuns));
          log(`${label}, commands and bytes by origin:`);
          for (const line of formatBreakdown(counted, process.argv.includes('--verbose')))
            console.log(`  ${line}`);
        }
      } finally {
        redis.disconnect();
      }
    }
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await server.stop();
  }
}

if (require.main === module) runMain('monitor', main);

// `npm run bench:monitor`: the Redis commands of ONE approval round trip, and of one run of each floor, as Redis's
// MONITOR sees them on a private redis-server (nobody else's commands), counted as sequential round trips: a
// client's command that starts within PIPELINE_GAP_US of the end of its previous one is in the same trip (a pipeline
// or a burst). Counts the whole run and the decision path (the decision sent → the tool handler entered).
// bench/README.md quotes it.
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { DEFAULT_QUEUE_PREFIX } from '@countersign/contracts';
import { OwnRedisServer } from '../test/reliability/support/redis-servers';
import {
  APPROVALS_CONFIG,
  APPROVER_TOKEN,
  BENCH_RATE_LIMITS,
  PRINCIPALS_CONFIG,
  REQUESTER_TOKEN,
} from './bench';
import { FLOOR_JOB_OPTIONS, FloorQueue, type FloorJob } from './floor-worker';
import { ROUND_TRIP_SCRIPT } from './phases/round-trip';
import { openEventStream, sendJson } from './support/http';
import { wallNow } from './support/measure';
import {
  allHealthy,
  type Child,
  startApprovalService,
  startContractFloor,
  startFloorWorker,
  startWorker,
  waitReady,
} from './support/processes';
import type { ProbeEvent } from './support/worker-probe';

/** A client's command that starts this close to the end of its previous one came in the same go (a pipeline, or a burst). */
const PIPELINE_GAP_US = 30;
/** Polls that run whether or not a run is in flight: left out of the counts (listed separately). */
const BACKGROUND = new Set(['bzpopmin', 'ping', 'info', 'client', 'monitor']);

interface Seen {
  atUs: number;
  client: string;
  command: string;
  args: string[];
}

/** One run's timeline: when the decision was sent and when the tool handler was entered (wall µs). */
interface Window {
  startUs: number;
  decisionUs: number;
  execUs: number;
  endUs: number;
}

const us = () => Math.round(wallNow() * 1000);
const log = (message: string) => console.log(`[monitor] ${message}`);

function probeOnce(child: Child, wanted: ProbeEvent['t']): Promise<number> {
  return new Promise((done) => {
    const listener = (event: ProbeEvent) => {
      if (event.t !== wanted) return;
      child.off('probe', listener);
      done(Math.round(event.at * 1000));
    };
    child.on('probe', listener);
  });
}

/** POST /runs, hear `pending` on the SSE stream, POST the decision: what the round-trip phase does, for one run. */
async function oneHttpRun(worker: Child, approvalUrl: string): Promise<Window> {
  const auth = { authorization: `Bearer ${APPROVER_TOKEN}` };
  let announce!: (requestId: string) => void;
  const announced = new Promise<string>((done) => (announce = done));
  const stream = await openEventStream(`${approvalUrl}/inbox/events`, auth, (event, data) => {
    const change = JSON.parse(data) as { requestId: string; status: string };
    if (event === 'change' && change.status === 'pending') announce(change.requestId);
  });
  const exec = probeOnce(worker, 'exec');
  const done = probeOnce(worker, 'done');
  const startUs = us();
  await sendJson(
    'POST',
    `${worker.url}/runs`,
    { agent: 'ops', input: 'monitor', script: ROUND_TRIP_SCRIPT },
    {
      authorization: `Bearer ${REQUESTER_TOKEN}`,
    },
  );
  const requestId = await announced;
  const decisionUs = us();
  await sendJson('POST', `${approvalUrl}/approvals/${requestId}/decisions`, { decision: 'approve' }, auth);
  const window = { startUs, decisionUs, execUs: await exec, endUs: await done };
  stream.close();
  return window;
}

/** The bare floor: the start job added, the stand-in adds the decision job, the floor worker "resumes". */
async function oneBareFloorRun(floorWorker: Child, url: string, prefix: string): Promise<Window> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const runs = new Queue(FloorQueue.Runs, { connection, prefix, defaultJobOptions: FLOOR_JOB_OPTIONS });
  const decisions = new Queue(FloorQueue.Decisions, {
    connection,
    prefix,
    defaultJobOptions: FLOOR_JOB_OPTIONS,
  });
  let decisionUs = 0;
  const approver = new Worker<FloorJob>(
    FloorQueue.Requests,
    async (job) => {
      decisionUs = us();
      await decisions.add('decision', job.data, { jobId: `decision-${job.data.callId}` });
    },
    { connection, prefix },
  );
  await approver.waitUntilReady();
  const exec = probeOnce(floorWorker, 'exec');
  const done = probeOnce(floorWorker, 'done');
  const startUs = us();
  const runId = randomUUID();
  await runs.add('start', { runId, callId: runId }, { jobId: runId });
  const window = { startUs, decisionUs: 0, execUs: await exec, endUs: await done };
  window.decisionUs = decisionUs;
  await approver.close();
  await Promise.all([runs.close(), decisions.close()]);
  connection.disconnect();
  return window;
}

/**
 * Sequential trips: per client, a command that starts within PIPELINE_GAP_US of the end of that client's previous one
 * is in the same trip; Lua's own commands are not trips. MONITOR stamps a command as it starts, and the commands its
 * script runs follow it (Redis runs one command at a time), so a script ends at its last Lua command: in a pipeline of
 * scripts, each starts as the one before it ends, however long that one ran.
 */
function trips(seen: Seen[]): { trips: number; commands: number; lines: string[] } {
  const endedAt = new Map<string, number>();
  let count = 0;
  const lines: string[] = [];
  const t0 = seen[0]?.atUs ?? 0;
  let running: string | undefined;
  for (const s of seen) {
    if (s.client === 'lua') {
      if (running !== undefined) endedAt.set(running, s.atUs);
      continue;
    }
    running = undefined;
    if (BACKGROUND.has(s.command)) continue;
    const last = endedAt.get(s.client);
    const newTrip = last === undefined || s.atUs - last > PIPELINE_GAP_US;
    endedAt.set(s.client, s.atUs);
    running = s.client;
    if (newTrip) count++;
    lines.push(
      `${newTrip ? '*' : ' '} +${((s.atUs - t0) / 1000).toFixed(2).padStart(7)} ms ${s.client.padEnd(16)} ${s.command} ${s.args.slice(0, 3).join(' ')}`.slice(
        0,
        160,
      ),
    );
  }
  return { trips: count, commands: lines.length, lines };
}

async function measure(
  label: string,
  url: string,
  run: () => Promise<Window>,
  verbose: boolean,
): Promise<void> {
  const monitor = await new Redis(url).monitor();
  const seen: Seen[] = [];
  monitor.on('monitor', (time: string, args: string[], source: string) => {
    const [command, ...rest] = args;
    // EVALSHA's SHA says nothing; its keys say which script's data it touches.
    const shown = command.toLowerCase() === 'evalsha' ? rest.slice(2) : rest;
    seen.push({
      atUs: Math.round(Number(time) * 1e6),
      client: source,
      command: command.toLowerCase(),
      args: shown,
    });
  });
  await new Promise((r) => setTimeout(r, 200));
  const w = await run();
  await new Promise((r) => setTimeout(r, 200));
  monitor.disconnect();
  const within = (from: number, to: number) => seen.filter((s) => s.atUs >= from && s.atUs <= to);
  const whole = trips(within(w.startUs, w.endUs));
  const decision = trips(within(w.decisionUs, w.execUs));
  log(
    `${label}: whole run ${whole.trips} sequential trips (${whole.commands} commands outside Lua, ` +
      `${((w.endUs - w.startUs) / 1000).toFixed(1)} ms); decision → tool ${decision.trips} trips ` +
      `(${decision.commands} commands, ${((w.execUs - w.decisionUs) / 1000).toFixed(1)} ms)`,
  );
  if (verbose) {
    log(`${label}, decision → tool (* = a new trip of that client):`);
    for (const line of decision.lines) console.log(`  ${line}`);
  }
  if (process.argv.includes('--whole-run')) {
    log(`${label}, whole run (* = a new trip of that client):`);
    for (const line of whole.lines) console.log(`  ${line}`);
  }
}

async function main(): Promise<void> {
  const verbose = process.argv.includes('--verbose');
  const server = await OwnRedisServer.start(['--appendonly', 'no']);
  const children: Child[] = [];
  try {
    const env = {
      REDIS_URL: server.url,
      QUEUE_PREFIX: DEFAULT_QUEUE_PREFIX,
      KEY_PREFIX: 'countersign',
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
    const floorEnv = { REDIS_URL: server.url, QUEUE_PREFIX: DEFAULT_QUEUE_PREFIX, CONCURRENCY: '16' };
    const floorWorker = startFloorWorker(floorEnv);
    const contract = await startContractFloor(floorEnv);
    children.push(approval, worker, floorWorker, contract.worker, contract.approval);
    await Promise.all([
      allHealthy([approval, worker]),
      ...[floorWorker, contract.worker, contract.approval].map((c) => waitReady(c)),
    ]);
    // Warm: scripts loaded, connections open, code paths compiled.
    for (let i = 0; i < 3; i++) {
      await oneHttpRun(worker, approval.url!);
      await oneHttpRun(contract.worker, contract.approval.url!);
      await oneBareFloorRun(floorWorker, server.url, DEFAULT_QUEUE_PREFIX);
    }
    await measure('Countersign round trip', server.url, () => oneHttpRun(worker, approval.url!), verbose);
    await measure(
      'contract floor',
      server.url,
      () => oneHttpRun(contract.worker, contract.approval.url!),
      verbose,
    );
    await measure(
      'bare floor',
      server.url,
      () => oneBareFloorRun(floorWorker, server.url, DEFAULT_QUEUE_PREFIX),
      verbose,
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await server.stop();
  }
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (error: Error) => {
      console.error(`[monitor] failed: ${error.stack ?? error.message}`);
      process.exit(1);
    },
  );

// Sequential Redis trips of one run, as MONITOR sees them on a server nobody else uses: a client's command that starts
// within PIPELINE_GAP_US of the end of its previous one is in the same trip (a pipeline or a burst); commands run
// inside Lua are not trips; background polls are left out. Counted over the whole run and over the decision path
// (the decision sent → the tool handler entered). `npm run bench:monitor` prints them; `npm run bench` judges the
// decision path's count (issue 27: at most 6).
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { FLOOR_QUEUE_OPTIONS, type FloorJob, FloorJobName, floorJobIds, FloorQueue } from '../floor-worker';
import { ROUND_TRIP_SCRIPT } from '../phases/round-trip';
import { openEventStream, sendJson } from './http';
import { median, sleep, wallNow } from './measure';
import type { Child } from './processes';
import { APPROVER_TOKEN, REQUESTER_TOKEN } from './services-config';
import type { ProbeEvent } from './worker-probe';

/** A client's command that starts this close to the end of its previous one came in the same go (a pipeline, or a burst). */
export const PIPELINE_GAP_US = 30;
/** Polls that run whether or not a run is in flight: left out of the counts. */
const BACKGROUND = new Set(['bzpopmin', 'ping', 'info', 'client', 'monitor']);

/** One command as MONITOR reported it (`client` is `lua` for a command a script ran). */
export interface Seen {
  atUs: number;
  client: string;
  command: string;
  args: string[];
}

/** One run's timeline: when it started, when the decision was sent, when the tool handler was entered, when it ended (wall µs). */
export interface RunWindow {
  startUs: number;
  decisionUs: number;
  execUs: number;
  endUs: number;
}

export interface TripCount {
  trips: number;
  /** Commands outside Lua. */
  commands: number;
  ms: number;
  /** One line per command, `*` where a new trip of that client starts. */
  lines: string[];
  /** Trips by connection name (CLIENT SETNAME; the address when it has none), most first. */
  byClient: [string, number][];
}

export interface MonitoredRun {
  wholeRun: TripCount;
  decisionToTool: TripCount;
}

const us = () => Math.round(wallNow() * 1000);

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
export async function oneHttpRun(worker: Child, approvalUrl: string): Promise<RunWindow> {
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
    { authorization: `Bearer ${REQUESTER_TOKEN}` },
  );
  const requestId = await announced;
  const decisionUs = us();
  await sendJson('POST', `${approvalUrl}/approvals/${requestId}/decisions`, { decision: 'approve' }, auth);
  const window = { startUs, decisionUs, execUs: await exec, endUs: await done };
  stream.close();
  return window;
}

/** The bare floor: the start job added, the stand-in adds the decision job, the floor worker "resumes". */
export async function oneBareFloorRun(floorWorker: Child, url: string, prefix: string): Promise<RunWindow> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const runs = new Queue(FloorQueue.Runs, { connection, prefix, ...FLOOR_QUEUE_OPTIONS });
  const decisions = new Queue(FloorQueue.Decisions, {
    connection,
    prefix,
    ...FLOOR_QUEUE_OPTIONS,
  });
  let decisionUs = 0;
  const approver = new Worker<FloorJob>(
    FloorQueue.Requests,
    async (job) => {
      decisionUs = us();
      await decisions.add(FloorJobName.Decision, job.data, { jobId: floorJobIds.decision(job.data.callId) });
    },
    { connection, prefix },
  );
  await approver.waitUntilReady();
  const exec = probeOnce(floorWorker, 'exec');
  const done = probeOnce(floorWorker, 'done');
  const startUs = us();
  const runId = randomUUID();
  await runs.add(FloorJobName.Start, { runId, callId: runId }, { jobId: floorJobIds.startRun(runId) });
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
export function countTrips(
  seen: Seen[],
  fromUs: number,
  toUs: number,
  names: ReadonlyMap<string, string> = new Map(),
): TripCount {
  const within = seen.filter((s) => s.atUs >= fromUs && s.atUs <= toUs);
  const endedAt = new Map<string, number>();
  let count = 0;
  const lines: string[] = [];
  const t0 = within[0]?.atUs ?? 0;
  let running: string | undefined;
  const byClient = new Map<string, number>();
  for (const s of within) {
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
    const name = names.get(s.client) ?? s.client;
    if (newTrip) {
      count++;
      byClient.set(name, (byClient.get(name) ?? 0) + 1);
    }
    lines.push(
      `${newTrip ? '*' : ' '} +${((s.atUs - t0) / 1000).toFixed(2).padStart(7)} ms ${name.padEnd(26)} ${s.command} ${s.args.slice(0, 3).join(' ')}`.slice(
        0,
        170,
      ),
    );
  }
  return {
    trips: count,
    commands: lines.length,
    ms: (toUs - fromUs) / 1000,
    lines,
    byClient: [...byClient].sort((a, b) => b[1] - a[1]),
  };
}

/** Connection names by address (`addr` → `name` of CLIENT LIST), for the listing: which process sent what. */
async function connectionNames(client: Redis): Promise<Map<string, string>> {
  const list = (await client.client('LIST')) as string;
  const names = new Map<string, string>();
  for (const line of list.split('\n')) {
    const addr = /(?:^| )addr=(\S+)/.exec(line)?.[1];
    const name = /(?:^| )name=(\S+)/.exec(line)?.[1];
    if (addr && name) names.set(addr, name);
  }
  return names;
}

/**
 * MONITOR on a connection of its own. ioredis switches that connection to monitor mode only once MONITOR's "+OK" has
 * been handled, so a command of another client that Redis reports in the same network read is taken for a reply to
 * nothing ("Command queue state error") and fails the start. The client's own ready check (an INFO) was such a
 * command, so it is let finish first; another client's is rare, and the start is tried again.
 */
async function startMonitor(client: Redis, attempts = 3): Promise<Redis> {
  await client.ping();
  for (let attempt = 1; ; attempt++) {
    // What client.monitor() does, keeping hold of the connection so that a failed start is closed, not leaked.
    const monitor = client.duplicate({ monitor: true, lazyConnect: false });
    try {
      await new Promise<void>((done, fail) => {
        monitor.once('error', fail);
        monitor.once('monitoring', () => {
          monitor.off('error', fail);
          done();
        });
      });
      return monitor;
    } catch (error) {
      monitor.disconnect();
      if (attempt >= attempts) throw error;
    }
  }
}

/**
 * Every command the server at `url` runs from now until `stop()` (MONITOR on a connection of its own), as countTrips
 * reads them. `broke`: why the stream broke off (an error or a close of its connection), if it did; `names()`: the
 * server's connection names by address, for countTrips.
 */
export async function monitorCommands(
  url: string,
  /** EVALSHA's arguments as sent (with the script's SHA and key count), for naming the script; else from its keys. */
  { keepScriptSha = false }: { keepScriptSha?: boolean } = {},
): Promise<{
  seen: Seen[];
  readonly broke: string | undefined;
  names(): Promise<Map<string, string>>;
  stop(): void;
}> {
  // monitor() opens a connection of its own beside the client's: both are closed by stop().
  const client = new Redis(url);
  const monitor = await startMonitor(client).catch((error: unknown) => {
    client.disconnect();
    throw error;
  });
  const seen: Seen[] = [];
  let broke: string | undefined;
  monitor.on('error', (error: Error) => (broke ??= `error: ${error.message}`));
  monitor.on('close', () => (broke ??= 'connection closed'));
  monitor.on('monitor', (time: string, args: string[], source: string) => {
    const [command, ...rest] = args;
    // EVALSHA's SHA says nothing; its keys say which script's data it touches.
    const shown = command.toLowerCase() === 'evalsha' && !keepScriptSha ? rest.slice(2) : rest;
    seen.push({
      atUs: Math.round(Number(time) * 1e6),
      client: source,
      command: command.toLowerCase(),
      args: shown,
    });
  });
  return {
    seen,
    get broke() {
      return broke;
    },
    names: () => connectionNames(client),
    stop() {
      monitor.removeAllListeners('close');
      monitor.disconnect();
      client.disconnect();
    },
  };
}

/**
 * Runs `run` once under MONITOR on the server at `url` and counts its trips. A sample whose MONITOR stream broke off
 * (an error or a close on its connection, or nothing seen after the tool was entered, though the run goes on to record
 * the result and finish) is taken again, up to `attempts` times: it would count the trips it missed as none.
 */
export async function monitorOneRun(
  url: string,
  run: () => Promise<RunWindow>,
  attempts = 3,
): Promise<MonitoredRun> {
  for (let attempt = 1; ; attempt++) {
    const monitored = await monitorCommands(url);
    await sleep(200);
    const w = await run();
    await sleep(200);
    const sawTail = monitored.seen.some((s) => s.atUs > w.execUs);
    const why = monitored.broke ?? (sawTail ? undefined : 'nothing seen after the tool was entered');
    const names = await monitored.names();
    monitored.stop();
    if (why === undefined)
      return {
        wholeRun: countTrips(monitored.seen, w.startUs, w.endUs, names),
        decisionToTool: countTrips(monitored.seen, w.decisionUs, w.execUs, names),
      };
    if (attempt >= attempts)
      throw new Error(`MONITOR broke off in ${attempts} samples in a row (${why}): no trips counted`);
  }
}

export interface TripsSummary {
  /** Median over the samples of the decision path's trips (what the target judges), and each sample's count. */
  decisionToTool: { trips: number; commands: number; samples: number[] };
  wholeRun: { trips: number; commands: number; samples: number[] };
}

/** `samples` runs, one at a time, each under MONITOR: the medians, and every sample's count. */
export async function medianTrips(
  url: string,
  run: () => Promise<RunWindow>,
  samples: number,
): Promise<TripsSummary> {
  const runs: MonitoredRun[] = [];
  for (let i = 0; i < samples; i++) runs.push(await monitorOneRun(url, run));
  const of = (pick: (r: MonitoredRun) => TripCount) => ({
    trips: median(runs.map((r) => pick(r).trips)),
    commands: median(runs.map((r) => pick(r).commands)),
    samples: runs.map((r) => pick(r).trips),
  });
  return { decisionToTool: of((r) => r.decisionToTool), wholeRun: of((r) => r.wholeRun) };
}

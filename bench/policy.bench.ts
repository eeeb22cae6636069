// Micro-benchmark of the policy engine: the whole pipeline for an auto call, alone and as a one-call turn (what
// the worker runs), against a direct call of the same handler, and the cost of fingerprinting a ~1 KB argument object. Run: npm run bench:policy [-- --strict]
import { z } from 'zod';
import {
  AccessControl,
  canonicalJson,
  defineTool,
  fingerprint,
  ToolCallPipeline,
  ToolRegistry,
  type ToolPlugin,
} from '@countersign/authorization';
import { CedarPolicySet } from '@countersign/policy';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_POLICY_COUNT, benchPolicyText, writeBenchPolicySet } from './support/cedar-policy-set';
import { checkFlags, runMain, wantsHelp } from './support/cli';

const USAGE = `Usage: npm run bench:policy [-- --strict]

Micro-benchmark of the policy pipeline in this process (no Redis, no services): an auto call through
ToolCallPipeline.evaluate and evaluateTurn against a direct call of the same handler, and fingerprinting a ~1 KB
argument object; medians over 200 batches of 1,000 calls. Also the same auto call with a Cedar set of 50 policies in
RBAC's place (its cost is reported, not held to the target).

  --strict  exit 1 when the pipeline overhead is 5 µs or more per auto call
  --help    this text (starts nothing)`;

const BATCH = 1_000;
const BATCHES = 200; // 200 × 1000 = 200k timed calls per measurement
const WARMUP_CALLS = 50_000;
const FINGERPRINT_BATCH = 100;
const FINGERPRINT_BATCHES = 300;
const TARGET_OVERHEAD_NS = 5_000;

const caller = { runId: 'bench-run', agent: 'bench', userId: 'alice', scopes: ['admin'] };

const readLogs = defineTool({
  name: 'read_logs',
  description: 'Reads the last lines of a service log',
  args: z.object({ service: z.string().min(1), lines: z.number().int().positive() }),
  tier: 'auto',
  handler: (args) => `${args.lines} lines of ${args.service}`,
});

const guard: ToolPlugin = {
  name: 'admins-only',
  beforeTool: (ctx) =>
    ctx.scopes.includes('admin') ? undefined : { action: 'skip', content: 'admins only' },
};

const pipeline = new ToolCallPipeline({
  registry: new ToolRegistry([readLogs]),
  accessControl: new AccessControl().defineRole('ops', { allow: ['tool:*'] }).assign('alice', 'ops'),
  plugins: [guard],
});

// The same pipeline with a Cedar set of 50 policies answering in RBAC's place (libs/policy).
const cedarDir = writeBenchPolicySet();
const cedarSet = CedarPolicySet.load(cedarDir, []);
const cedarPipeline = new ToolCallPipeline({
  registry: new ToolRegistry([{ ...readLogs, name: 'get_service_status' } as typeof readLogs]),
  callPolicy: cedarSet,
  plugins: [guard],
});
// The same 50 policies with every one asked (as if no policy named its tool first): the worst case.
const cedarWholePipeline = new ToolCallPipeline({
  registry: new ToolRegistry([{ ...readLogs, name: 'get_service_status' } as typeof readLogs]),
  callPolicy: CedarPolicySet.fromSources(
    'bench',
    readFileSync(join(cedarDir, 'schema.cedarschema'), 'utf8'),
    [{ file: 'bench.cedar', text: benchPolicyText() }],
    [],
    false,
  ),
  plugins: [guard],
});
const cedarCall = { id: 'call-1', name: 'get_service_status', args: { service: 'api', lines: 50 } };
const cedarCaller = { ...caller, agent: 'ops' };

const call = { id: 'call-1', name: 'read_logs', args: { service: 'api', lines: 50 } };
const turn = [call];

function progress(message: string): void {
  console.log(`[bench] ${message}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Times `batches` batches of `batchSize` awaited calls; returns the median ns per call over batches. */
async function measure(
  label: string,
  once: () => unknown,
  batchSize: number,
  batches: number,
): Promise<{ medianNs: number; calls: number }> {
  const perCall: number[] = [];
  let sink = 0;
  for (let b = 0; b < batches; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batchSize; i++) {
      if ((await once()) !== undefined) sink++;
    }
    perCall.push(Number(process.hrtime.bigint() - start) / batchSize);
    if ((b + 1) % Math.max(1, Math.floor(batches / 4)) === 0) progress(`${label}: batch ${b + 1}/${batches}`);
  }
  if (sink !== batchSize * batches) throw new Error(`${label}: some calls returned nothing`);
  return { medianNs: median(perCall), calls: batchSize * batches };
}

async function warmUp(label: string, once: () => unknown, calls: number): Promise<void> {
  progress(`${label}: warming up (${calls.toLocaleString('en-US')} calls)`);
  for (let i = 0; i < calls; i++) await once();
}

/** An argument object whose canonical JSON is about 1 KB. */
function oneKilobyteArgs(): Record<string, unknown> {
  const args: Record<string, unknown> = {
    service: 'payments-api',
    region: 'eu-west-1',
    dryRun: false,
    replicas: 3,
    labels: { team: 'payments', tier: 'critical', owner: 'oncall@example.com' },
    hosts: [] as string[],
  };
  const hosts = args.hosts as string[];
  while (canonicalJson(args).length < 1_000)
    hosts.push(`host-${hosts.length.toString().padStart(3, '0')}.internal`);
  return args;
}

function fmt(ns: number): string {
  return `${ns.toFixed(0).padStart(8)} ns`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (wantsHelp(argv)) return void console.log(USAGE);
  checkFlags(argv, { flags: ['strict'], values: [] });
  const strict = argv.includes('--strict');
  const runPipeline = () => pipeline.evaluate(call, caller);
  const runTurn = () => pipeline.evaluateTurn(turn, caller);
  // The handler gets the same context object the pipeline builds (field by field, no spread).
  const runDirect = () =>
    readLogs.handler(call.args, {
      runId: caller.runId,
      agent: caller.agent,
      userId: caller.userId,
      scopes: caller.scopes,
      callId: call.id,
    });

  const runCedar = () => cedarPipeline.evaluate(cedarCall, cedarCaller);
  const runCedarWhole = () => cedarWholePipeline.evaluate(cedarCall, cedarCaller);
  const check = [await runPipeline(), ...(await runTurn()), await runCedar(), await runCedarWhole()];
  const wrong = check.find((outcome) => outcome.kind !== 'executed');
  if (wrong) throw new Error(`bench setup is wrong: pipeline returned ${wrong.kind}`);

  progress(`node ${process.version}, ${BATCHES} batches × ${BATCH} calls, median over batches`);
  await warmUp('pipeline', runPipeline, WARMUP_CALLS);
  await warmUp('turn', runTurn, WARMUP_CALLS);
  await warmUp('direct', runDirect, WARMUP_CALLS);
  const direct = await measure('direct', runDirect, BATCH, BATCHES);
  const whole = await measure('pipeline', runPipeline, BATCH, BATCHES);
  const wholeTurn = await measure('turn', runTurn, BATCH, BATCHES);
  await warmUp('cedar', runCedar, WARMUP_CALLS / 10);
  const cedar = await measure(`cedar ${BENCH_POLICY_COUNT} policies`, runCedar, BATCH / 10, BATCHES);
  await warmUp('cedar, every policy asked', runCedarWhole, WARMUP_CALLS / 10);
  const cedarWhole = await measure('cedar, every policy asked', runCedarWhole, BATCH / 10, BATCHES);

  const bigArgs = oneKilobyteArgs();
  const bytes = Buffer.byteLength(canonicalJson(bigArgs), 'utf8');
  const runFingerprint = () => fingerprint('deploy_service', bigArgs);
  await warmUp(`fingerprint ${bytes} B`, runFingerprint, 5_000);
  const print = await measure(
    `fingerprint ${bytes} B`,
    runFingerprint,
    FINGERPRINT_BATCH,
    FINGERPRINT_BATCHES,
  );

  const overhead = whole.medianNs - direct.medianNs;
  const turnOverhead = wholeTurn.medianNs - direct.medianNs;
  const meets = Math.max(overhead, turnOverhead) < TARGET_OVERHEAD_NS;
  const rows: [string, string, string][] = [
    ['direct handler call (auto tool)', fmt(direct.medianNs), direct.calls.toLocaleString('en-US')],
    ['ToolCallPipeline.evaluate (RBAC + 1 plugin)', fmt(whole.medianNs), whole.calls.toLocaleString('en-US')],
    ['pipeline overhead (difference)', fmt(overhead), ''],
    [
      'ToolCallPipeline.evaluateTurn, one call',
      fmt(wholeTurn.medianNs),
      wholeTurn.calls.toLocaleString('en-US'),
    ],
    ['turn overhead (difference)', fmt(turnOverhead), ''],
    [
      `ToolCallPipeline.evaluate (Cedar, ${BENCH_POLICY_COUNT} policies + 1 plugin)`,
      fmt(cedar.medianNs),
      cedar.calls.toLocaleString('en-US'),
    ],
    [`Cedar evaluation (difference to RBAC)`, fmt(cedar.medianNs - whole.medianNs), ''],
    [
      `  the same with all ${BENCH_POLICY_COUNT} policies asked (no tool index)`,
      fmt(cedarWhole.medianNs - whole.medianNs),
      cedarWhole.calls.toLocaleString('en-US'),
    ],
    [`fingerprint, ${bytes} B canonical args`, fmt(print.medianNs), print.calls.toLocaleString('en-US')],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log('');
  console.log(`${'measurement'.padEnd(width)} | median/call | calls`);
  console.log(`${'-'.repeat(width)}-|-------------|--------`);
  for (const [name, value, calls] of rows)
    console.log(`${name.padEnd(width)} | ${value.padStart(11)} | ${calls}`);
  console.log('');
  console.log(
    `target: pipeline overhead under ${TARGET_OVERHEAD_NS / 1000} µs per auto call → ${meets ? 'MET' : 'MISSED'} ` +
      `(${(overhead / 1000).toFixed(2)} µs alone, ${(turnOverhead / 1000).toFixed(2)} µs as a turn)`,
  );
  if (strict && !meets) process.exitCode = 1;
}

runMain('bench:policy', main);

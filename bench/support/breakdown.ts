// Where a round trip's Redis commands and bytes go: a batch of runs under MONITOR on a server nobody else uses, each
// command (those run inside Lua too) put down to an origin — a BullMQ queue and its script, an own script named from
// its SHA, or a plain command by its key — with the bytes of the commands clients sent (RESP size of what MONITOR
// shows). `npm run bench:monitor -- --breakdown N` prints it; bench/README.md quotes it. INFO commandstats and
// total_net_input_bytes around the same batch are printed beside it, so the table can be checked against the bench's
// own counters.
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readLuaSource } from '@countersign/platform';
import { Redis } from 'ioredis';
import { netBytes } from './cost';
import { commandCalls, commandsPerRun, sleep } from './measure';
import { ROOT } from './processes';
import { monitorCommands } from './trips';

/** A command as MONITOR showed it: who sent it (`lua` for one a script ran), its name in lowercase, its arguments. */
export interface Seen {
  client: string;
  command: string;
  args: string[];
}

/** One origin's share per run: commands sent by clients, commands run inside their scripts, bytes sent. */
export interface OriginRow {
  origin: string;
  detail: string;
  sent: number;
  inLua: number;
  bytes: number;
  /** Commands run inside Lua by name, per run. */
  luaCommands: Record<string, number>;
  /** The first such command as MONITOR showed it (its arguments), for a look at what the bytes are. */
  example: string;
}

export interface Breakdown {
  runs: number;
  rows: OriginRow[];
  monitored: { commands: number; bytes: number };
  info: { commands: ReturnType<typeof commandsPerRun>; bytesIn: number };
}

/** Left out of the counts, as INFO is left out of the bench's: the readings' own commands. */
const READINGS = new Set(['info', 'monitor']);

/** SHA1 of every script Redis may be sent by EVALSHA: BullMQ's, and ours (every `lua/*.lua` with includes inlined). */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  const sha = (text: string) => createHash('sha1').update(text).digest('hex');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bull = require('bullmq/dist/cjs/scripts') as Record<string, { name: string; content: string }>;
  for (const script of Object.values(bull)) names.set(sha(script.content), `bullmq:${script.name}`);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (entry === 'node_modules' || entry === 'includes' || entry.startsWith('.')) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.lua') && dir.endsWith('/lua'))
        names.set(sha(readLuaSource(dirname(dir), entry).text), entry.replace(/-\d+\.lua$/, ''));
    }
  };
  for (const top of ['apps', 'libs']) walk(join(ROOT, top));
  return names;
}

/** Own scripts by what they change. */
const SCRIPT_ORIGIN: [RegExp, string][] = [
  [/^audit-/, 'audit appends'],
  [/^rate-limit-/, 'rate limits'],
  [/^append-event/, 'run events'],
  [
    /^(claim-run|park-run|apply-decision|start-call|record-call-result|finish-run|checkpoint-run|transition-call|settle-executing-call|heartbeat-call|keep-denial|note-manual-step)$/,
    'run state',
  ],
  [/^(create-request|record-vote|read-page|decide-by-rule|complete-notice|mark-published)$/, 'approvals'],
  [/^count-trust$/, 'trust'],
  [/^(finish-timers|claim-due-timers|expire-request|escalate-request)$/, 'timers'],
  [
    /^(count-in-window|notification-answer|record-delivery|release-delivery|claim-digest|claim-delivery)$/,
    'notifications',
  ],
  [/^restart-service$/, 'the tool (demo infra)'],
];

/** Plain commands by their first key (or channel). */
const KEY_ORIGIN: [RegExp, string][] = [
  [/^\{[^}:]+\}:([a-z-]+):/, 'bullmq'],
  [/^\{[^}]+:rate-limit:/, 'rate limits'],
  [/^\{[^}]+:audit\}/, 'audit appends'],
  [/^\{[^}]+:run:[^}]+\}:readers$/, 'run readers (intake)'],
  [/^\{[^}]+:run:/, 'run state'],
  [/^\{[^}]+:runs\}:unpublished/, 'run state (unpublished index)'],
  [/:run-events$/, 'run events'],
  [/^\{[^}]+:approvals\}:trust/, 'trust'],
  [/^\{[^}]+:approvals\}:timers/, 'timers'],
  [/^\{[^}]+:approvals\}:standing-rules/, 'approvals (standing rules)'],
  [/^\{[^}]+:approvals\}:request:/, 'approvals'],
  [/:approvals:changes$/, 'live updates'],
  [/^\{[^}]+:infra\}/, 'the tool (demo infra)'],
  [/^\{[^}]+:results\}/, 'results'],
];

/** What MONITOR shows of a key, its IDs replaced so that keys of different runs group together. */
function keyShape(key: string): string {
  return key
    .replace(/\{([^}:]+):run:[^}]+\}/, '{$1:run:*}')
    .replace(/:request:[^:]+$/, ':request:*')
    .replace(/:rate-limit:([a-z-]+):[^}]+:(address|principal)\}/, ':rate-limit:$1:*:$2}')
    .replace(/\}:([^:]+):[0-9a-f-]{8,}.*$/, '}:$1:*')
    .replace(/(\{[^}]+\}):[A-Za-z0-9_-]{12,}$/, '$1:*');
}

function classifyPlain(command: string, args: string[]): { origin: string; detail: string } {
  const key = command === 'multi' || command === 'exec' ? '' : (args[0] ?? '');
  for (const [pattern, origin] of KEY_ORIGIN) {
    const m = pattern.exec(key);
    if (!m) continue;
    if (origin === 'bullmq') return { origin: `BullMQ ${m[1]}`, detail: `${command} ${keyShape(key)}` };
    return { origin, detail: `${command} ${keyShape(key)}` };
  }
  return { origin: 'other', detail: `${command} ${keyShape(key)}` };
}

function classifyScript(name: string | undefined, args: string[]): { origin: string; detail: string } {
  const firstKey = Number(args[1]) > 0 ? (args[2] ?? '') : '';
  if (name?.startsWith('bullmq:')) {
    const queue = /^\{[^}]+\}:([a-z-]+):/.exec(firstKey)?.[1] ?? '?';
    return { origin: `BullMQ ${queue}`, detail: name.slice('bullmq:'.length) };
  }
  if (name) {
    const origin = SCRIPT_ORIGIN.find(([pattern]) => pattern.test(name))?.[1] ?? 'other';
    return { origin, detail: name };
  }
  return { ...classifyPlain('evalsha', [firstKey]), detail: `unknown script on ${keyShape(firstKey)}` };
}

/** RESP size of a command as a client sends it (an array of bulk strings); MONITOR's escapes make it approximate. */
function respBytes(command: string, args: string[]): number {
  const bulk = (s: string) => {
    const n = Buffer.byteLength(s);
    return 1 + String(n).length + 2 + n + 2;
  };
  return 1 + String(args.length + 1).length + 2 + bulk(command) + args.reduce((sum, a) => sum + bulk(a), 0);
}

/** Every command of `seen` put down to its origin, per run (exported for its test). */
export function tabulate(seen: Seen[], runs: number): OriginRow[] {
  const names = scriptNames();
  const rows = new Map<string, OriginRow>();
  let parent: OriginRow | undefined;
  for (const s of seen) {
    if (READINGS.has(s.command)) continue;
    if (s.client === 'lua') {
      if (!parent) continue;
      parent.inLua++;
      parent.luaCommands[s.command] = (parent.luaCommands[s.command] ?? 0) + 1;
      continue;
    }
    const at =
      s.command === 'evalsha'
        ? classifyScript(names.get(s.args[0]?.toLowerCase() ?? ''), s.args)
        : s.command === 'eval'
          ? classifyScript(
              names.get(
                createHash('sha1')
                  .update(s.args[0] ?? '')
                  .digest('hex'),
              ),
              s.args,
            )
          : classifyPlain(s.command, s.args);
    const id = `${at.origin}\u0000${at.detail}`;
    let row = rows.get(id);
    if (!row)
      rows.set(
        id,
        (row = {
          ...at,
          sent: 0,
          inLua: 0,
          bytes: 0,
          luaCommands: {},
          example: [s.command, ...s.args].join(' '),
        }),
      );
    row.sent++;
    row.bytes += respBytes(s.command, s.args);
    parent = row;
  }
  return [...rows.values()]
    .map((r) => ({
      ...r,
      sent: r.sent / runs,
      inLua: r.inLua / runs,
      bytes: r.bytes / runs,
      luaCommands: Object.fromEntries(
        Object.entries(r.luaCommands)
          .sort((a, b) => b[1] - a[1])
          .map(([name, n]) => [name, n / runs]),
      ),
    }))
    .sort((a, b) => a.origin.localeCompare(b.origin) || b.sent + b.inLua - (a.sent + a.inLua));
}

/** Runs `batch` (which starts `runs` runs and resolves when they are done) under MONITOR, then tabulates. */
export async function breakdownOf(url: string, runs: number, batch: () => Promise<void>): Promise<Breakdown> {
  const monitored = await monitorCommands(url, { keepScriptSha: true });
  const { seen } = monitored;
  const client = new Redis(url);
  await sleep(200);
  const commandsBefore = await commandCalls(client);
  const bytesBefore = await netBytes(client);
  const from = seen.length;
  await batch();
  await sleep(250);
  const to = seen.length;
  const bytesAfter = await netBytes(client);
  const commandsAfter = await commandCalls(client);
  await sleep(100);
  const broke = monitored.broke;
  monitored.stop();
  client.disconnect();
  // A stream that broke off would leave commands out of the table.
  if (broke) throw new Error(`MONITOR broke off during the breakdown (${broke})`);
  const rows = tabulate(seen.slice(from, to), runs);
  return {
    runs,
    rows,
    monitored: {
      commands: rows.reduce((sum, r) => sum + r.sent + r.inLua, 0),
      bytes: rows.reduce((sum, r) => sum + r.bytes, 0),
    },
    info: {
      commands: commandsPerRun(commandsBefore, commandsAfter, runs),
      bytesIn: (bytesAfter.in - bytesBefore.in) / runs,
    },
  };
}

/** The breakdown as text: one line per origin (totals), its details under it. */
export function formatBreakdown(b: Breakdown, examples = false): string[] {
  const lines: string[] = [];
  const f = (n: number, digits = 2) => n.toFixed(digits).padStart(8);
  lines.push(
    `per run, ${b.runs} runs under MONITOR: ${b.monitored.commands.toFixed(1)} commands, ~${Math.round(b.monitored.bytes)} B sent; ` +
      `INFO around the batch: ${b.info.commands.total} commands, ${Math.round(b.info.bytesIn)} B in`,
  );
  lines.push(
    `${'origin / script or command'.padEnd(64)} ${'sent'.padStart(8)} ${'in Lua'.padStart(8)} ${'total'.padStart(8)} ${'bytes'.padStart(8)}  commands in Lua`,
  );
  const origins = [...new Set(b.rows.map((r) => r.origin))];
  const totals = origins
    .map((origin) => {
      const rows = b.rows.filter((r) => r.origin === origin);
      const sum = (pick: (r: OriginRow) => number) => rows.reduce((s, r) => s + pick(r), 0);
      return {
        origin,
        rows,
        sent: sum((r) => r.sent),
        inLua: sum((r) => r.inLua),
        bytes: sum((r) => r.bytes),
      };
    })
    .sort((a, b) => b.sent + b.inLua - (a.sent + a.inLua));
  for (const t of totals) {
    lines.push(`${t.origin.padEnd(64)} ${f(t.sent)} ${f(t.inLua)} ${f(t.sent + t.inLua)} ${f(t.bytes, 0)}`);
    for (const r of t.rows) {
      if (r.sent + r.inLua < 0.05) continue;
      const lua = Object.entries(r.luaCommands)
        .filter(([, n]) => n >= 0.05)
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(', ');
      lines.push(
        `  ${r.detail.slice(0, 62).padEnd(62)} ${f(r.sent)} ${f(r.inLua)} ${f(r.sent + r.inLua)} ${f(r.bytes, 0)}  ${lua}`,
      );
      if (examples) lines.push(`      e.g. ${r.example.slice(0, 2000)}`);
    }
  }
  lines.push('by command name (INFO commandstats delta / runs):');
  lines.push(
    '  ' +
      Object.entries(b.info.commands.perCommand)
        .map(([name, n]) => `${name} ${n}`)
        .join(', '),
  );
  return lines;
}

// `npm start` as the README has a newcomer use it: both services with development defaults until Ctrl-C, and the
// getting-started guide's CLI commands, read from the guide and run as printed, with the shipped runbook
// (examples/runbook.json) against them: carol approves with the CLI, dave from his email in the local mail viewer.
// The CLI shows the run's whole history, each event once.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalView } from '@countersign/contracts';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from './support/redis';

jest.setTimeout(90_000);

const root = join(__dirname, '..');
const prefixes = uniquePrefixes('start');
const TOKENS = {
  alice: 'alice-demo-token-change-me',
  carol: 'carol-demo-token-change-me',
  dave: 'dave-demo-token-change-me',
};

interface Proc {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  code: Promise<number | null>;
}

function started(command: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, command, { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 80_000);
  const code = new Promise<number | null>((resolve) =>
    child.on('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, code };
}

/**
 * The `npx countersign …` lines of docs/guides/getting-started.md's bash blocks, as argument lists (double quotes
 * group words; a trailing `# …` is a comment): the test runs what the guide prints.
 */
function guideCommands(): string[][] {
  const guide = readFileSync(join(root, 'docs', 'guides', 'getting-started.md'), 'utf8');
  const blocks = [...guide.matchAll(/^```bash\n([\s\S]*?)^```/gm)].map(([, body]) => body);
  return blocks
    .flatMap((body) => body.split('\n'))
    .filter((line) => line.startsWith('npx countersign '))
    .map((line) => {
      const words = [...line.replace(/\s+#.*$/, '').matchAll(/"([^"]*)"|(\S+)/g)].map(
        ([, quoted, bare]) => quoted ?? bare,
      );
      return words.slice(2);
    });
}

let start: Proc;
const logDir = mkdtempSync(join(tmpdir(), 'countersign-start-'));
afterAll(async () => {
  rmSync(logDir, { recursive: true, force: true });
  if (start && start.child.exitCode === null) start.child.kill('SIGKILL');
  await deletePrefixedKeys(prefixes);
});

it("runs both services until Ctrl-C, and the getting-started guide's commands run as printed against them", async () => {
  start = started(
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'scripts/start.ts'].concat([
      '--worker-port',
      '0',
      '--approval-port',
      '0',
    ]),
    {
      REDIS_URL: TEST_REDIS_URL,
      KEY_PREFIX: prefixes.keyPrefix,
      QUEUE_PREFIX: prefixes.queuePrefix,
      LOG_LEVEL: 'info', // lines at every level the services write go to the log file, none to the terminal
      LOG_FILE: join(logDir, 'logs', 'services.log'),
    },
  );
  await waitFor(() => start.stdout().includes('Stop with Ctrl-C.'), 'the start banner', 40_000);
  const banner = start.stdout();
  expect(banner).toContain('DEVELOPMENT-ONLY values for DECISION_SIGNING_SECRET, LINK_TOKEN_SECRET');
  const workerUrl = /agent worker +(http:\S+)/.exec(banner)![1];
  const approvalUrl = /approval service +(http:\S+)/.exec(banner)![1];
  expect(banner).toContain(
    `export COUNTERSIGN_WORKER_URL=${workerUrl} COUNTERSIGN_APPROVAL_URL=${approvalUrl}`,
  );
  for (const url of [workerUrl, approvalUrl]) expect((await fetch(`${url}/health`)).status).toBe(200);
  // The banner's GET /demo/infra: `npm start` turns the simulated infrastructure on (a deployment's default is off).
  const infra = await fetch(`${workerUrl}/demo/infra`, {
    headers: { Authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(infra.status).toBe(200);

  const cliEnv = { COUNTERSIGN_WORKER_URL: workerUrl, COUNTERSIGN_APPROVAL_URL: approvalUrl };
  const countersign = (...args: string[]) => started([join(root, 'bin', 'countersign.js'), ...args], cliEnv);
  // The getting-started guide's commands, as printed (its `<requestId>` filled in from the line the list printed).
  const guide = guideCommands();
  const runLine = guide.find((argv) => argv[0] === 'run')!;
  const run = countersign(...runLine);
  await waitFor(() => /needs confirmation \(call (\S+),/.exec(run.stdout()), 'the confirmation', 30_000);
  const callId = /needs confirmation \(call (\S+),/.exec(run.stdout())![1];
  const list = countersign(...guide.find((argv) => argv[0] === 'approvals')!);
  expect(await list.code).toBe(0);
  const listed = list
    .stdout()
    .split('\n')
    .find((line) => line.startsWith(callId));
  // The line the guide shows under the command, its `…` standing for what differs from run to run.
  const sample = /^# (call_….*)$/m.exec(
    readFileSync(join(root, 'docs', 'guides', 'getting-started.md'), 'utf8'),
  )![1];
  const pattern = sample.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '.+?');
  expect(listed).toMatch(new RegExp(`^${pattern}$`));
  const requestId = /request (\S+)$/.exec(listed!)![1];
  const [carolApproves, daveApproves] = guide.filter((argv) => argv[0] === 'approve');
  expect(carolApproves).toEqual(['approve', '<requestId>', '--token', TOKENS.carol]);
  // dave's line is carol's with his token; here he decides by email instead, as the email guide shows.
  expect(daveApproves).toEqual(['approve', '<requestId>', '--token', TOKENS.dave]);
  // The ops tools come from the ops MCP server; the shipped config's preview (a read of get_service_status) rides
  // with the request, as a built-in tool's would.
  const asked = await fetch(`${approvalUrl}/approvals/${callId}`, {
    headers: { Authorization: `Bearer ${TOKENS.carol}` },
  });
  expect(((await asked.json()) as ApprovalView).request.context?.preview).toBe(
    'payments (degraded, 2 replicas, 0 restarts so far)',
  );
  // payments* needs two approvers (config/approvals.json): carol votes with the CLI; dave reads his approval email in
  // the local mail viewer the banner names, and approves from its link, as the docs' email guide says.
  const vote = countersign(...carolApproves.map((arg) => (arg === '<requestId>' ? requestId : arg)));
  expect({ code: await vote.code, stderr: vote.stderr() }).toEqual({ code: 0, stderr: '' });
  expect(vote.stdout()).toContain('vote recorded (1/2 approvals)');
  const viewer = /read every mail at (http:\S+)/.exec(banner)![1];
  const mailPath = await waitFor(async () => {
    const index = await (await fetch(viewer)).text();
    return /<a href="(\/mail\/\d+)">[^<]*<\/a> — to dave@example\.test/.exec(index)?.[1];
  }, "dave's mail in the viewer");
  const mail = await fetch(new URL(mailPath, viewer));
  expect(mail.headers.get('content-security-policy')).toContain("script-src 'none'");
  const link = /href="(http:[^"]+\/approve\/[^"]+)"/.exec(await mail.text())![1];
  expect((await fetch(link)).status).toBe(200); // the confirmation page: a GET decides nothing
  const decided = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'decision=approve',
  });
  expect(decided.status).toBe(200);
  expect(await decided.text()).toContain('Thank you');
  expect(await run.code).toBe(0);
  expect(run.stderr()).toBe('');

  // The run's history as the CLI printed it: every event once, in order.
  const lines = run
    .stdout()
    .split('\n')
    .filter((line) => /^(…|✓|⏸|💬|■|☑)/.test(line));
  expect(lines).toEqual([
    '… run is running',
    expect.stringMatching(/^✓ get_service_status \(.+\) executed: .*"degraded"/),
    `⏸ restart_service {"service":"payments"} needs confirmation (call ${callId}, tier confirm)`,
    '… run is awaiting_confirmation',
    `☑ restart_service (call ${callId}) approved by carol, dave`,
    '… run is running',
    expect.stringMatching(/^✓ restart_service \(.+\) executed/),
    '💬 payments was degraded; it is restarted.',
    '… run is completed',
    '■ run completed: payments was degraded; it is restarted.',
  ]);
  // The approval emails went to the local mail catcher, and their links were printed.
  expect(start.stdout()).toMatch(/✉ mail to (carol|dave)@example\.test: .*\n +http:\S+\/approve\//);

  start.child.kill('SIGINT');
  expect(await start.code).toBe(0);
  expect(start.stdout()).toContain('stopped.');
  // The terminal shows only the friendly output; the services' JSON lines are in the log file the banner names.
  const jsonLines = (text: string) => text.split('\n').filter((line) => line.trimStart().startsWith('{'));
  expect(jsonLines(start.stdout())).toEqual([]);
  expect(jsonLines(start.stderr())).toEqual([]);
  expect(banner).toContain(`logs              ${join(logDir, 'logs', 'services.log')} (level info;`);
  const logged = jsonLines(readFileSync(join(logDir, 'logs', 'services.log'), 'utf8')).map(
    (line) => JSON.parse(line) as { service: string },
  );
  expect(new Set(logged.map((line) => line.service))).toEqual(
    new Set(['agent-worker', 'approval-service', 'ops-mcp-server']),
  );
});

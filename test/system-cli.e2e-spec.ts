// The whole system, decided from the terminal: `countersign approve|deny`, `approvals list`, and the
// interactive "Allow? [y/n]" of `countersign run` — all through the approval service's API, so audited.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestStore } from '../apps/approval-service/src/requests/request-store';
import { approvalRequest } from './support/approval-harness';
import { testToken } from './support/principals';
import { waitFor } from './support/redis';
import { restartScript, SYSTEM_APPROVERS, TestSystem } from './support/system';

const bin = join(__dirname, '..', 'bin', 'countersign.js');

interface Cli {
  code: Promise<number>;
  stdout: () => string;
  stderr: () => string;
  write: (text: string) => void;
}

function countersign(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: {
      ...process.env,
      COUNTERSIGN_WORKER_URL: system.workerUrl,
      COUNTERSIGN_APPROVAL_URL: system.approvalUrl,
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  return {
    code: new Promise((resolve) =>
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve(code ?? -1);
      }),
    ),
    stdout: () => stdout,
    stderr: () => stderr,
    write: (text) => child.stdin.write(text),
  };
}

async function finished(cli: Cli) {
  const code = await cli.code;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

const asBob = { COUNTERSIGN_APPROVER_TOKEN: SYSTEM_APPROVERS.bob.apiToken };
/** alice starts the runs (her token) and bob answers their prompts at the same terminal. */
const aliceWithBob = { COUNTERSIGN_TOKEN: testToken('alice'), ...asBob };

let system: TestSystem;
beforeAll(async () => (system = await TestSystem.start('sys-cli')));
afterAll(() => system?.close());

it('runs a restart approved with `countersign approve`, after `approvals list` showed it', async () => {
  const runId = await system.startRun(restartScript('web'));
  const call = await system.waitForPendingCall(runId);
  await system.waitForApproval(call.callId);

  const list = await finished(countersign(['approvals', 'list', '--status', 'pending'], asBob));
  expect(list.code).toBe(0);
  expect(list.stdout).toContain(call.callId);
  expect(list.stdout).toContain('restart_service {"service":"web"}');

  const approve = await finished(countersign(['approve', call.callId], asBob));
  expect(approve).toMatchObject({
    code: 0,
    stdout: [
      `${call.callId}: approved by bob`,
      '  tool:        restart_service',
      '  arguments:   {"service":"web"}',
      `  fingerprint: ${call.fingerprint} (revision 0, as the agent asked)`,
      '',
    ].join('\n'),
  });

  await system.waitForStatus(runId, 'completed');
  expect((await system.service('web')).restarts).toBe(1);
  expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
    actor: 'bob',
    detail: { decision: 'approve', channel: 'cli' },
  });
  await system.waitForAudit(call.callId, 'tool.executed');

  const again = await finished(countersign(['deny', call.callId], asBob));
  expect(again.code).toBe(6);
  expect(again.stderr).toContain('already decided by bob');
});

it('asks "Allow? [y/n]" in `countersign run` and sends the answer through the approval service', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cs-cli-'));
  const script = join(dir, 'runbook.json');
  writeFileSync(script, JSON.stringify(restartScript('api')));
  const before = (await system.service('api')).restarts;

  const cli = countersign(['run', 'ops', 'restart api', '--script', script], aliceWithBob);
  await waitFor(() => cli.stdout().includes('Allow? [y/n]'), 'the prompt', 20_000);
  expect(cli.stdout()).toMatch(/⏸ restart_service \{"service":"api"\} needs confirmation/);
  expect(cli.stdout()).toContain('"service": "api"');
  expect((await system.service('api')).restarts).toBe(before); // nothing runs while the question is open
  cli.write('y\n');

  const result = await finished(cli);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('approved restart_service {"service":"api"} (by bob)');
  expect(result.stdout).toMatch(/✓ restart_service \(.+\) executed/);
  expect(result.stdout).toContain('■ run completed: restarted api');
  expect((await system.service('api')).restarts).toBe(before + 1);

  const runId = /▶ run (\S+) started/.exec(result.stdout)![1];
  const entries = await waitFor(async () => {
    const all = await system.audit({ runId });
    return all.some((e) => e.type === 'tool.executed') ? all : undefined;
  }, 'tool.executed in the run audit');
  expect(entries.find((e) => e.type === 'decision.recorded')).toMatchObject({
    actor: 'bob',
    detail: { decision: 'approve', channel: 'cli' },
  });
});

it('a "n" answer with a reason denies the call; the model is told and nothing runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cs-cli-'));
  const script = join(dir, 'runbook.json');
  writeFileSync(
    script,
    JSON.stringify({
      script: [
        { toolCalls: [{ name: 'scale_service', args: { service: 'web', replicas: 9 } }] },
        { text: 'ok' },
      ],
    }),
  );
  const cli = countersign(['run', 'ops', 'scale web', '--script', script], aliceWithBob);
  await waitFor(() => cli.stdout().includes('Allow? [y/n]'), 'the prompt', 20_000);
  cli.write('n\nnot during the freeze\n');
  const result = await finished(cli);
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/✗ scale_service \(.+\) denied: .*not during the freeze/);
  expect((await system.service('web')).replicas).toBe(2);
});

it('exits with a clear error and its own exit code for each way a command can fail', async () => {
  const cases: [string[], Record<string, string>, number, RegExp][] = [
    [['approve', 'call-does-not-exist'], asBob, 4, /unknown call ID call-does-not-exist/],
    [['approvals', 'list'], { COUNTERSIGN_APPROVER_TOKEN: 'not-a-real-token-000000' }, 5, /not authorized/],
    [['deny', 'call-x'], {}, 5, /no token: pass --token/],
    [['run', 'ops', 'hi'], asBob, 5, /no token: pass --token/],
    [
      ['run', 'ops', 'hi'],
      { COUNTERSIGN_TOKEN: 'not-a-real-token-000000' },
      5,
      /agent worker did not accept the token/,
    ],
    [
      ['approvals', 'list', '--approval-url', 'http://127.0.0.1:9'],
      asBob,
      3,
      /cannot reach the approval service/,
    ],
    [['run', 'nobody', 'hi'], aliceWithBob, 4, /unknown agent "nobody"/],
    [['approve'], asBob, 2, /missing required argument 'callId'/],
  ];
  // Started together: each is a separate process, and none changes state.
  const results = await Promise.all(cases.map(([args, env]) => finished(countersign(args, env))));
  results.forEach((result, i) => {
    const [args, , code, message] = cases[i];
    expect({ args, code: result.code }).toEqual({ args, code });
    expect(result.stderr).toMatch(message);
  });
});

it('answers a call with `countersign respond <callId> "text"`: nothing runs, the model gets the text', async () => {
  const before = (await system.service('web')).restarts;
  const runId = await system.startRun(restartScript('web'));
  const call = await system.waitForPendingCall(runId);
  await system.waitForApproval(call.callId);
  const text = 'Not like this: restart only the canary first.';

  // No text is a usage error (exit 2), refused before anything is sent.
  const empty = await finished(countersign(['respond', call.callId, '  '], asBob));
  expect(empty.code).toBe(2);
  expect(empty.stderr).toContain('the response must not be empty');
  expect((await system.run(runId)).status).toBe('awaiting_confirmation');

  const respond = await finished(countersign(['respond', call.callId, text], asBob));
  expect(respond).toMatchObject({
    code: 0,
    stdout: [
      `${call.callId}: responded by bob; the call does not run, the agent is given your response`,
      '  tool:        restart_service',
      '  arguments:   {"service":"web"}',
      `  fingerprint: ${call.fingerprint} (revision 0, as the agent asked)`,
      '',
    ].join('\n'),
  });
  const run = await system.waitForStatus(runId, 'completed');
  expect(run.messages.find((m) => m.role === 'tool' && m.toolCallId === call.callId)?.content).toContain(
    `the approver (bob) responded instead of approving. This is their response, not the tool's output: ${text}`,
  );
  expect((await system.service('web')).restarts).toBe(before);
  expect(await system.waitForAudit(call.callId, 'decision.recorded')).toMatchObject({
    actor: 'bob',
    detail: { decision: 'respond', response: text, channel: 'cli' },
  });

  const again = await finished(countersign(['respond', call.callId, 'again'], asBob));
  expect(again.code).toBe(6);
  expect(again.stderr).toContain('already decided by bob');
});

it('refuses the requester deciding their own call (separation of duties) with exit code 5', async () => {
  const runId = await system.startRun(restartScript('web'), {}, 'bob');
  const call = await system.waitForPendingCall(runId, 'bob');
  await system.waitForApproval(call.callId);
  const result = await finished(countersign(['approve', call.callId], asBob));
  expect(result.code).toBe(5);
  expect(result.stderr).toContain('you cannot decide on your own request');
  expect((await system.run(runId, 'bob')).status).toBe('awaiting_confirmation');
});

it('explains the commands with --help', async () => {
  const results = await Promise.all(
    [
      ['run', '--help'],
      ['approvals', 'list', '--help'],
      ['deny', '--help'],
      ['respond', '--help'],
    ].map((args) => finished(countersign(args))),
  );
  for (const result of results) {
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: countersign /);
    expect(result.stdout).toContain('Exit codes:');
  }
});

it('`approvals list` follows the pages of the service to the end, and stops at --limit with a note on stderr', async () => {
  // More pending requests than one page holds (500), stored directly: listed in the order they were created.
  const store = system.approvals.app.get(RequestStore);
  const now = Date.now();
  const ids = Array.from({ length: 520 }, (_, i) => `paged-${String(i).padStart(3, '0')}`);
  await Promise.all(
    ids.map((callId, i) =>
      store.create({
        request: approvalRequest({ callId }),
        status: 'pending',
        groups: ['ops'],
        quorum: 1,
        channels: ['web'],
        now: now + i,
        expiresAt: now + 3_600_000,
      }),
    ),
  );

  const all = await finished(countersign(['approvals', 'list', '--status', 'pending', '--json'], asBob));
  expect([all.code, all.stderr]).toEqual([0, '']);
  const listed = (JSON.parse(all.stdout) as { request: { callId: string } }[]).map((v) => v.request.callId);
  expect(listed.filter((id) => id.startsWith('paged-'))).toEqual(ids);
  expect(new Set(listed).size).toBe(listed.length);

  const capped = await finished(
    countersign(['approvals', 'list', '--status', 'pending', '--limit', '501'], asBob),
  );
  expect(capped.code).toBe(0);
  expect(capped.stdout.trim().split('\n')).toHaveLength(501);
  expect(capped.stderr).toBe(
    'countersign: stopped after 501 approval requests; more follow (raise --limit to see them)\n',
  );

  const refused = await finished(countersign(['approvals', 'list', '--limit', '0'], asBob));
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('--limit');
});

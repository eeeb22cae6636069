// The approver features from the terminal (the compiled CLI): the run prompt shows what the run is for and what the
// call will change and takes an edit; `approve --args`; `rules add|list|revoke`; `done`.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint } from '@countersign/authorization';
import type { ApprovalView, StandingRule } from '@countersign/contracts';
import { UX_APPROVALS } from './support/approver-ux';
import { testToken } from './support/principals';
import { waitFor } from './support/redis';
import { TestSystem } from './support/system';

jest.setTimeout(60_000);

const bin = join(__dirname, '..', 'bin', 'countersign.js');
const token = (id: string) => UX_APPROVALS.approvers.find((a) => a.id === id)?.apiToken ?? testToken(id);

let system: TestSystem;
beforeAll(async () => {
  system = await TestSystem.start('ux-cli', {
    approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
  });
});
afterAll(() => system?.close());

/** The compiled CLI as `as`, with `env` added; resolves when it exits. */
function countersign(args: string[], as: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env: {
      ...process.env,
      COUNTERSIGN_WORKER_URL: system.workerUrl,
      COUNTERSIGN_APPROVAL_URL: system.approvalUrl,
      COUNTERSIGN_TOKEN: token(as),
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const code = new Promise<number>((resolve) =>
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve(c ?? -1);
    }),
  );
  return {
    stdout: () => stdout,
    write: (text: string) => child.stdin.write(text),
    finished: async () => ({ code: await code, stdout, stderr }),
  };
}

it('shows the context at the prompt, and runs the arguments edited there', async () => {
  const script = join(mkdtempSync(join(tmpdir(), 'cs-ux-')), 'runbook.json');
  writeFileSync(
    script,
    JSON.stringify([
      {
        text: 'web has spare capacity; scaling down.',
        toolCalls: [{ name: 'scale_service', args: { service: 'web', replicas: 0 } }],
      },
      { text: 'scaled' },
    ]),
  );
  const cli = countersign(['run', 'ops', 'trim web for the night', '--script', script], 'alice', {
    COUNTERSIGN_APPROVER_TOKEN: token('bob'),
  });
  await waitFor(() => cli.stdout().includes('Allow? [y/n]'), 'the prompt', 20_000);
  for (const line of [
    'run for:    “trim web for the night”',
    'model said: “web has spare capacity; scaling down.”',
    'tool:       scale_service (confirm): Sets the number of replicas of a service.',
    'preview:    web: 2 → 0 replicas',
    'precondition: {"replicas":2}',
    'routed by:  defaultGroup: no rule matched, so the default group decides',
    'approvals:  none yet',
    'expires:    in 30 min',
  ])
    expect(cli.stdout()).toContain(line);
  cli.write('e\n{"service":"web","replicas":1}\n');
  const { code, stdout } = await cli.finished();
  expect(code).toBe(0);
  expect(stdout).toContain('approved scale_service {"service":"web","replicas":1} (by bob)');
  expect(stdout).toContain('Approved. The agent runs scale_service with the edited arguments now, once');
  expect((await system.service('web')).replicas).toBe(1);
});

it('approves edited arguments with `approve --args`, and refuses them on a deny or when they are not JSON', async () => {
  const runId = await system.startRun([
    { toolCalls: [{ name: 'scale_service', args: { service: 'api', replicas: 12 } }] },
    { text: 'ok' },
  ]);
  const call = await system.waitForPendingCall(runId);
  await system.waitForApproval(call.callId);
  expect(
    await countersign(['deny', call.callId, '--args', '{"replicas":1}'], 'bob').finished(),
  ).toMatchObject({ code: 2 });
  expect(await countersign(['approve', call.callId, '--args', '{replicas'], 'bob').finished()).toMatchObject({
    code: 2,
  });
  expect(
    await countersign(
      ['approve', call.callId, '--args', '{"service":"api","replicas":99}'],
      'bob',
    ).finished(),
  ).toMatchObject({ code: 2, stderr: expect.stringContaining('args.replicas: must be <= 20') });
  const approved = await countersign(
    ['approve', call.callId, '--args', '{"service":"api","replicas":5}'],
    'bob',
  ).finished();
  expect(approved).toMatchObject({
    code: 0,
    stdout: [
      `${call.callId}: approved by bob`,
      '  tool:        scale_service',
      '  arguments:   {"service":"api","replicas":5}',
      `  fingerprint: ${fingerprint('scale_service', { service: 'api', replicas: 5 })} (revision 1, your edit)`,
      '',
    ].join('\n'),
  });
  await system.waitForStatus(runId, 'completed');
  expect((await system.service('api')).replicas).toBe(5);
});

it('adds, lists and revokes standing rules, only as a rule-writer', async () => {
  expect(
    await countersign(
      ['rules', 'add', '--tool', 'restart_service', '--requester', 'alice'],
      'bob',
    ).finished(),
  ).toMatchObject({ code: 5 });
  const added = await countersign(
    [
      'rules',
      'add',
      '--tool',
      'restart_service',
      '--requester',
      'alice',
      '--arg',
      'service=api',
      '--expires-in',
      '1d',
    ],
    'carol',
  ).finished();
  expect(added.code).toBe(0);
  const id = /^(sr-[0-9a-f]{12}) {2}restart_service for alice where service=api {2}by carol/.exec(
    added.stdout,
  )?.[1];
  expect(id).toBeDefined();
  const listed = await countersign(['rules', 'list'], 'bob').finished();
  expect(listed.stdout).toContain(`${id}  restart_service for alice where service=api`);
  const revoked = await countersign(['rules', 'revoke', id!], 'carol').finished();
  expect(revoked).toMatchObject({ code: 0, stdout: expect.stringContaining(`revoked ${id}`) });
  expect((await system.api<StandingRule[]>('GET', '/standing-rules', 'bob')).json).toEqual([]);
});

it("shows in the `run` stream that a standing rule approved a call, and whose rule it is, as it shows a person's vote", async () => {
  const added = await countersign(
    ['rules', 'add', '--tool', 'restart_service', '--requester', 'alice', '--arg', 'service=search'],
    'carol',
  ).finished();
  const id = /^(sr-[0-9a-f]{12}) /.exec(added.stdout)?.[1];
  expect(id).toBeDefined();
  const script = join(mkdtempSync(join(tmpdir(), 'cs-ux-')), 'restart.json');
  writeFileSync(
    script,
    JSON.stringify([
      { toolCalls: [{ name: 'restart_service', args: { service: 'search' } }] },
      { text: 'restarted' },
    ]),
  );
  const run = await countersign(
    ['run', 'ops', 'restart search', '--script', script, '--no-prompt'],
    'alice',
  ).finished();
  expect(run.code).toBe(0);
  const callId = /restart_service \{"service":"search"\} needs confirmation \(call (\S+),/.exec(
    run.stdout,
  )?.[1];
  expect(callId).toBeDefined();
  expect(run.stdout).toMatch(
    new RegExp(
      `\\n☑ restart_service \\(call ${callId}\\) approved by standing rule ${id} \\(by carol, until [^)]+\\)\\n`,
    ),
  );
  await countersign(['rules', 'revoke', id!], 'carol').finished();
});

it('marks a manual-step notice done with `done --note`', async () => {
  await system.startRun([
    { toolCalls: [{ id: 'cli-manual', name: 'delete_volume', args: { volume: 'scratch' } }] },
    { text: 'ok' },
  ]);
  await system.waitForApproval('cli-manual');
  const done = await countersign(
    ['done', 'cli-manual', '--note', 'archived, then deleted'],
    'bob',
  ).finished();
  expect(done).toMatchObject({ code: 0, stdout: expect.stringContaining('cli-manual: Marked done.') });
  expect(await system.waitForAudit('cli-manual', 'manual_step.done')).toMatchObject({
    actor: 'bob',
    detail: { note: 'archived, then deleted', channel: 'cli' },
  });
});

describe('finding 7: the CLI shows the revision an approver decides', () => {
  /** A run of alice's that scales payments: routed to finance (carol, dave), two approvals needed. */
  async function paymentsCall(replicas: number) {
    const runId = await system.startRun([
      { toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas } }] },
      { text: 'scaled' },
    ]);
    const call = await system.waitForPendingCall(runId);
    const view = await system.waitForApproval(call.callId, 'dave');
    return { runId, callId: call.callId, asked: view.request.fingerprint };
  }

  /** carol approves payments with other arguments (any channel: the API here), making revision 1. */
  async function carolEdits(callId: string, args: Record<string, unknown>) {
    const edit = await system.api('POST', `/approvals/${callId}/decisions`, 'carol', {
      decision: 'approve',
      args,
    });
    expect(edit.status).toBe(202);
  }

  it('shows dave the arguments carol edited, and `approve` echoes the tool, arguments and fingerprint it decided', async () => {
    const { runId, callId } = await paymentsCall(3);
    const edited = { service: 'payments', replicas: 5 };
    await carolEdits(callId, edited);
    const fp = fingerprint('scale_service', edited);

    const list = await countersign(['approvals', 'list', '--status', 'pending'], 'dave').finished();
    expect(list.code).toBe(0);
    const line = list.stdout.split('\n').find((l) => l.startsWith(`${callId} `));
    expect(line).toContain('scale_service {"service":"payments","replicas":5}');
    expect(line).toMatch(
      /revision 1, edited by carol at \S+; the agent asked for \{"service":"payments","replicas":3\}/,
    );
    expect(line).toContain(`fingerprint ${fp}`);
    // The state the approval is for (scale_service's precondition), on the list and on `show`.
    expect(line).toMatch(/ {2}precondition \{"replicas":\d+\} {2}/);

    const shown = await countersign(['approvals', 'show', callId], 'dave').finished();
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}precondition: \{"replicas":\d+\}$/m);
    expect(shown.stdout).toMatch(
      /revision: {3}1, edited by carol at \S+; the agent asked for \{"service":"payments","replicas":3\}/,
    );
    expect(shown.stdout).toContain(`fingerprint: ${fp}`);
    expect(shown.stdout).toContain('"replicas": 5');

    const approve = await countersign(['approve', callId], 'dave').finished();
    expect(approve).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `${callId}: approved by carol, dave`,
        '  tool:        scale_service',
        '  arguments:   {"service":"payments","replicas":5}',
        `  fingerprint: ${fp} (revision 1, edited by carol)`,
        '',
      ].join('\n'),
    });
    await system.waitForStatus(runId, 'completed');
    expect((await system.service('payments')).replicas).toBe(5);
  });

  it('refuses `approve --fingerprint <old>` after an edit, with exit code 7 and what changed; the current one decides', async () => {
    const { runId, callId, asked } = await paymentsCall(3);
    const edited = { service: 'payments', replicas: 6 };
    await carolEdits(callId, edited);
    const fp = fingerprint('scale_service', edited);

    for (const decision of ['approve', 'deny']) {
      const refused = await countersign([decision, callId, '--fingerprint', asked], 'dave').finished();
      expect({ decision, code: refused.code, stdout: refused.stdout }).toEqual({
        decision,
        code: 7,
        stdout: '',
      });
      expect(refused.stderr).toContain(
        `${callId}: not decided: the arguments changed since the revision you decided on (fingerprint ${asked})`,
      );
      expect(refused.stderr).toMatch(
        /now revision 1, edited by carol at \S+: scale_service \{"service":"payments","replicas":6\}/,
      );
      expect(refused.stderr).toContain(`fingerprint ${fp}`);
      expect(refused.stderr).toContain(`countersign approvals show ${callId}`);
    }
    const view = (await system.api<ApprovalView>('GET', `/approvals/${callId}`, 'dave')).json;
    expect({ status: view.status, votes: view.votes.map((v) => v.approver) }).toEqual({
      status: 'pending',
      votes: ['carol'],
    });

    const bad = await countersign(['approve', callId, '--fingerprint', 'abc'], 'dave').finished();
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--fingerprint');

    const pinned = await countersign(['approve', callId, '--fingerprint', fp], 'dave').finished();
    expect(pinned).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`  fingerprint: ${fp} (revision 1, edited by carol)`),
    });
    await system.waitForStatus(runId, 'completed');
    expect((await system.service('payments')).replicas).toBe(6);
  });

  it('asks again at the `run` prompt, showing the new revision, when another approver edited the call meanwhile', async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'cs-ux-')), 'runbook.json');
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 3 } }] },
        { text: 'scaled' },
      ]),
    );
    const cli = countersign(['run', 'ops', 'scale payments', '--script', script], 'alice', {
      COUNTERSIGN_APPROVER_TOKEN: token('dave'),
    });
    await waitFor(() => cli.stdout().includes('Allow? [y/n]'), 'the prompt', 20_000);
    expect(cli.stdout()).toContain('revision:   0, as the agent asked');
    const callId = /\(call (\S+), tier confirm\)/.exec(cli.stdout())![1];
    await carolEdits(callId, { service: 'payments', replicas: 7 });

    cli.write('y\n');
    await waitFor(() => cli.stdout().split('Allow? [y/n]').length === 3, 'the prompt again', 20_000);
    const again = cli.stdout().split('Allow? [y/n]')[1];
    expect(again).toContain('the arguments changed while you were asked');
    expect(again).toMatch(
      /revision: {3}1, edited by carol at \S+; the agent asked for \{"service":"payments","replicas":3\}/,
    );
    expect(again).toContain(
      `fingerprint: ${fingerprint('scale_service', { service: 'payments', replicas: 7 })}`,
    );
    expect(again).toContain('"replicas": 7');
    cli.write('y\n');
    const { code, stdout } = await cli.finished();
    expect(code).toBe(0);
    expect(stdout).toContain('approved scale_service {"service":"payments","replicas":7} (by carol, dave)');
    expect((await system.service('payments')).replicas).toBe(7);
  });
});

// Exactly once past our process, for a provider's tool: a worker killed (SIGKILL) while an approved MCP call runs does
// not get it sent again by the worker that takes the run over; the call is asked about again, and the server's own
// count says how many times it was received.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerHarness } from '../support/agent-worker-harness';
import { mcpAgentsConfig, writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';
import { TestMcpServer } from '../support/test-mcp-server';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(90_000);

describe('an approved MCP call whose worker dies', () => {
  const h = new WorkerHarness('mcp-recovery');
  const notes = new TestMcpServer();
  let killed: ChildProcess | undefined;

  afterAll(async () => {
    if (killed && killed.exitCode === null && killed.signalCode === null) killed.kill('SIGKILL');
    await h.cleanup();
    await notes.stop();
  });

  it('is asked about again, never sent again on its own', async () => {
    await notes.start();
    const config = mcpAgentsConfig(mkdtempSync(join(tmpdir(), 'cs-mcp-recovery-')));
    const servers = config.mcpServers as Record<string, Record<string, unknown>>;
    delete servers.fs;
    (config.agents as Record<string, { tools: unknown[] }>).mcp.tools = [{ server: 'notes' }];
    Object.assign(servers.notes, {
      headers: {},
      tiers: { slow: 'confirm' },
      toolTimeoutMs: { slow: 60_000 },
    });
    const env = { AGENTS_CONFIG: writeConfig(config), NOTES_MCP_URL: notes.url };

    const doomed = await spawnWorker(h, env);
    killed = doomed.process;
    const runId = await h.startRun(doomed.url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ name: 'notes__slow', args: { ms: 30_000 } }] }, { text: 'done' }],
    });
    const [call] = await h.waitForPending(doomed.url, runId);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await waitFor(() => notes.count('slow') === 1, 'the server to receive the approved call');
    doomed.process.kill('SIGKILL');

    // A worker that takes the run over sees a stale heartbeat: the call is interrupted and goes back to approvers.
    const rescuer = await h.startWorker(env);
    const again = await waitFor(
      () => h.approvalRequest(call.callId, 1),
      'the interrupted call to be asked about again',
      30_000,
    );
    expect(again).toMatchObject({ reason: 'interrupted', attempt: 1 });
    expect(await h.auditTypes(runId)).toContain('tool.interrupted');
    expect(notes.count('slow')).toBe(1);

    // Denied this time: the server never hears of it again, and the run ends.
    await h.publishDecision(
      h.decision(runId, { ...call, requestId: again!.requestId }, 'deny', {
        attempt: 1,
        reason: 'it may have run already',
      }),
    );
    await h.waitForStatus(rescuer.url, runId, 'completed');
    expect(notes.count('slow')).toBe(1);
  });
});

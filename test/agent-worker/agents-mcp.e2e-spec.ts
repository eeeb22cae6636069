// MCP servers as tool providers, against real servers started here: the published filesystem server
// (@modelcontextprotocol/server-filesystem, its own process over stdio, on a temp directory) and a small MCP server
// over streamable HTTP (test/support/test-mcp-server.ts). What ran is counted at the server or read on disk.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, RunView } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { WorkerHarness } from '../support/agent-worker-harness';
import { FS_SERVER, mcpAgentsConfig, writeConfig } from '../support/mcp-config';
import { waitFor } from '../support/redis';
import { TestMcpServer } from '../support/test-mcp-server';

jest.setTimeout(60_000);

const NOTES_TOKEN = 'notes-token-3b1f0c9a7d';

const toolMessages = (view: RunView) =>
  view.messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');

describe('MCP servers as tool providers', () => {
  const h = new WorkerHarness('mcp');
  const notes = new TestMcpServer(NOTES_TOKEN);
  const dir = mkdtempSync(join(tmpdir(), 'cs-mcp-fs-'));
  let worker: RunningAgentWorker;
  let url: string;

  /** Runs `calls` as one scripted turn, then a text; returns the finished run. */
  async function runTurn(calls: { name: string; args: Record<string, unknown> }[]): Promise<RunView> {
    const runId = await h.startRun(url, { agent: 'mcp', script: [{ toolCalls: calls }, { text: 'done' }] });
    return h.waitForStatus(url, runId, 'completed');
  }

  beforeAll(async () => {
    writeFileSync(join(dir, 'runbook.md'), '# restart payments\n');
    await notes.start();
    worker = await h.startWorker({
      AGENTS_CONFIG: writeConfig(mcpAgentsConfig(dir)),
      NOTES_MCP_URL: notes.url,
      NOTES_MCP_TOKEN: NOTES_TOKEN,
      MCP_FS_TOKEN: 'fs-token-0f2a9c',
    });
    url = worker.url;
  });
  afterAll(async () => {
    await h.cleanup();
    await notes.stop();
  });

  it('runs an auto tool of a stdio server at once, under its server-qualified name', async () => {
    const view = await runTurn([{ name: 'fs__read_text_file', args: { path: join(dir, 'runbook.md') } }]);
    expect(toolMessages(view)).toEqual([
      expect.objectContaining({ name: 'fs__read_text_file', content: '# restart payments\n' }),
    ]);
  });

  it('sends the credential from the secret reference and says which call it serves', async () => {
    const before = notes.count('lookup');
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ id: 'look-1', name: 'notes__lookup', args: { key: 'k1' } }] }, { text: 'ok' }],
    });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolMessages(view)[0].content).toBe('found k1');
    expect(notes.count('lookup')).toBe(before + 1);
    expect(notes.calls.at(-1)).toMatchObject({
      caller: 'countersign',
      meta: { 'countersign/runId': runId, 'countersign/callId': 'look-1', 'countersign/userId': 'alice' },
    });
  });

  it('parks a confirm tool; after approval the server receives exactly one call, even if the decision comes twice', async () => {
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [
        { toolCalls: [{ name: 'notes__write_note', args: { text: 'restart at 14:00' } }] },
        { text: 'ok' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({ toolName: 'notes__write_note', tier: 'confirm' });
    expect(notes.count('write_note')).toBe(0);

    const decision = h.decision(runId, call, 'approve');
    await Promise.all([h.publishDecision(decision), h.publishDecision(decision, `dup-${call.callId}`)]);
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolMessages(view)[0].content).toBe('noted: restart at 14:00');
    expect(notes.count('write_note')).toBe(1);
  });

  it('writes a file through the filesystem server only after approval, once', async () => {
    const target = join(dir, 'approved.txt');
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [
        { toolCalls: [{ name: 'fs__write_file', args: { path: target, content: 'v1' } }] },
        { text: 'written' },
      ],
    });
    const [call] = await h.waitForPending(url, runId);
    expect(existsSync(target)).toBe(false);
    await h.publishDecision(h.decision(runId, call, 'approve'));
    await h.waitForStatus(url, runId, 'completed');
    expect(readFileSync(target, 'utf8')).toBe('v1');
  });

  it('sends nothing to the server when the call is denied', async () => {
    const target = join(dir, 'denied.txt');
    const before = notes.count('write_note');
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [
        {
          toolCalls: [
            { name: 'fs__write_file', args: { path: target, content: 'no' } },
            { name: 'notes__write_note', args: { text: 'no' } },
          ],
        },
        { text: 'refused' },
      ],
    });
    const pending = await h.waitForPending(url, runId, 2);
    for (const call of pending)
      await h.publishDecision(h.decision(runId, call, 'deny', { reason: 'not now' }));
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolMessages(view).map((m) => m.content)).toEqual([
      expect.stringContaining('denied'),
      expect.stringContaining('denied'),
    ]);
    expect(existsSync(target)).toBe(false);
    expect(notes.count('write_note')).toBe(before);
  });

  it('takes tiers from the config: a read-only hint never lowers one', async () => {
    // list_directory says readOnlyHint: true, but no pattern makes it auto: it waits like any unnamed tool.
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ name: 'fs__list_directory', args: { path: dir } }] }, { text: 'listed' }],
    });
    const [call] = await h.waitForPending(url, runId);
    expect(call).toMatchObject({ toolName: 'fs__list_directory', tier: 'confirm' });
    await h.publishDecision(h.decision(runId, call, 'deny'));
    await h.waitForStatus(url, runId, 'completed');
  });

  it("checks the arguments against the server's JSON schema, naming the field", async () => {
    const before = notes.calls.length;
    const view = await runTurn([
      { name: 'fs__read_text_file', args: { path: 42 } },
      { name: 'notes__lookup', args: { key: 'k', extra: true } },
    ]);
    expect(toolMessages(view).map((m) => m.content)).toEqual([
      expect.stringMatching(/Invalid arguments for tool "fs__read_text_file": path: must be string/),
      expect.stringMatching(/Invalid arguments for tool "notes__lookup": extra: is not an accepted argument/),
    ]);
    expect(notes.calls.length).toBe(before);
  });

  it('asks again about a parked call whose tool the server changed meanwhile, and runs it only after the new approval', async () => {
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ name: 'notes__write_note', args: { text: 'v2' } }] }, { text: 'ok' }],
    });
    const [call] = await h.waitForPending(url, runId);
    const before = notes.count('write_note');
    // Changed without a notification: the worker must look again before it runs an approved call.
    await notes.changeTool(
      'write_note',
      { description: 'Writes a note and emails it to every customer.' },
      false,
    );

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const again = await waitFor(() => h.approvalRequest(call.callId, 1), 'the call asked about again');
    expect(again).toMatchObject({ reason: 'definition_changed', attempt: 1 });
    expect(again!.toolDefinitionHash).not.toBe((await h.approvalRequest(call.callId))!.toolDefinitionHash);
    expect(notes.count('write_note')).toBe(before);

    await h.publishDecision(
      h.decision(runId, { ...call, requestId: again!.requestId }, 'approve', { attempt: 1 }),
    );
    await h.waitForStatus(url, runId, 'completed');
    expect(notes.count('write_note')).toBe(before + 1);
  });

  it('follows tools/list_changed: a tool the server adds can be called', async () => {
    const listed = notes.listings;
    await notes.addTool({
      name: 'count_words',
      description: 'Counts words.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
      call: (args) => String(String(args.text).split(/\s+/).length),
    });
    await waitFor(() => notes.listings > listed, 'the worker to list the tools again');
    const view = await waitFor(async () => {
      const run = await runTurn([{ name: 'notes__count_words', args: { text: 'one two three' } }]);
      return toolMessages(run)[0].content === '3' ? run : undefined;
    }, 'the new tool to be callable');
    expect(toolMessages(view)[0].name).toBe('notes__count_words');
  });

  it('cuts a large result with a note to the model, and tells the model about a tool error', async () => {
    const view = await runTurn([
      { name: 'notes__big', args: { bytes: 5000 } },
      { name: 'notes__fail', args: {} },
    ]);
    const [big, fail] = toolMessages(view).map((m) => m.content);
    expect(big).toBe(
      `${'x'.repeat(1024)}\n[truncated: the result was 5000 bytes; only the first 1024 are shown]`,
    );
    expect(fail).toBe('Tool "notes__fail" failed: disk full');
  });

  it('cancels a call that exceeds its tool timeout at the server, and the run goes on', async () => {
    const cancelled = notes.cancelled;
    const view = await runTurn([{ name: 'notes__slow', args: { ms: 10_000 } }]);
    expect(toolMessages(view)[0].content).toMatch(
      /MCP server "notes" did not answer within 400 ms; the call was cancelled at the server/,
    );
    await waitFor(() => notes.cancelled > cancelled, 'the server to see the cancellation');
  });

  it('gives the model a clear error while an HTTP server is down, and uses it again once it is back', async () => {
    await notes.stop();
    try {
      const view = await runTurn([{ name: 'notes__lookup', args: { key: 'down' } }]);
      expect(toolMessages(view)[0].content).toMatch(
        /MCP server "notes" (is unreachable|failed during the call)/,
      );
      expect(view.result).toBe('done');
    } finally {
      await notes.start();
    }
    const back = await waitFor(async () => {
      const run = await runTurn([{ name: 'notes__lookup', args: { key: 'back' } }]);
      return toolMessages(run)[0].content === 'found back' ? run : undefined;
    }, 'the worker to reconnect');
    expect(back.status).toBe('completed');
  });

  it('calls again, once, on a new session when the server restarted and forgot the old one (it ran nothing)', async () => {
    await notes.stop();
    await notes.start();
    const before = notes.count('lookup');
    const view = await runTurn([{ name: 'notes__lookup', args: { key: 'after-restart' } }]);
    expect(toolMessages(view)[0].content).toBe('found after-restart');
    expect(notes.count('lookup')).toBe(before + 1);
  });

  it('restarts a stdio server that died', async () => {
    const pid = serverPid(dir);
    process.kill(pid, 'SIGKILL');
    const view = await waitFor(async () => {
      const run = await runTurn([{ name: 'fs__read_text_file', args: { path: join(dir, 'runbook.md') } }]);
      return toolMessages(run)[0].content === '# restart payments\n' ? run : undefined;
    }, 'the filesystem server to be restarted');
    expect(view.status).toBe('completed');
    expect(serverPid(dir)).not.toBe(pid);
  });
});

/** The pid of the filesystem server serving `dir` (started by the worker of this test, found by its argument). */
function serverPid(dir: string): number {
  const pids = readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      return args.includes(FS_SERVER) && args.includes(dir);
    } catch {
      return false;
    }
  });
  if (pids.length !== 1) throw new Error(`expected one filesystem server for ${dir}, found ${pids.length}`);
  return Number(pids[0]);
}

describe('MCP tool names', () => {
  const h = new WorkerHarness('mcp-names');
  const notes = new TestMcpServer();
  afterAll(async () => {
    await h.cleanup();
    await notes.stop();
  });

  it('offers a name two servers claim from neither (no call may depend on which server answered first)', async () => {
    await notes.start();
    const server = (prefix: string) => ({
      transport: 'http',
      url: notes.url,
      prefix,
      tiers: { '*': 'auto' },
    });
    const config = {
      mcpServers: { left: server('shared_'), right: server('shared_'), own: server('own_') },
      agents: {
        mcp: {
          tools: [{ server: 'left' }, { server: 'right' }, { server: 'own', only: ['look*'] }],
          roles: { operator: { allow: ['tool:*'] } },
          users: { alice: ['operator'] },
        },
      },
    };
    const worker = await h.startWorker({ AGENTS_CONFIG: writeConfig(config) });
    const runId = await h.startRun(worker.url, {
      agent: 'mcp',
      script: [
        {
          toolCalls: [
            { name: 'shared_lookup', args: { key: 'a' } },
            { name: 'own_lookup', args: { key: 'b' } },
            { name: 'own_big', args: { bytes: 1 } },
          ],
        },
        { text: 'done' },
      ],
    });
    const view = await h.waitForStatus(worker.url, runId, 'completed');
    expect(toolMessages(view).map((m) => m.content)).toEqual([
      expect.stringMatching(/^Unknown tool "shared_lookup"/),
      'found b',
      expect.stringMatching(/^Unknown tool "own_big"/),
    ]);
    expect(notes.calls.map((c) => c.args)).toEqual([{ key: 'b' }]);
    // One session per server while the worker runs; a worker that stops ends them (the server would keep them).
    expect(notes.sessions).toBe(3);
    await worker.close();
    expect(notes.sessions).toBe(0);
  });
});

describe('MCP tool preconditions', () => {
  const h = new WorkerHarness('mcp-preconditions');
  const notes = new TestMcpServer();
  let url: string;

  beforeAll(async () => {
    await notes.start();
    const server = {
      transport: 'http',
      url: notes.url,
      // fail is confirm here, so its calls wait for a person and their precondition is evaluated.
      tiers: { '*': 'auto', fail: 'confirm' },
      // write_note's precondition reads lookup (an auto tool). fail's names write_note, which may change something
      // (confirm): it is never run for a precondition, so fail's calls cannot be evaluated.
      preconditions: {
        write_note: { call: { tool: 'lookup', args: { key: '{text}' } } },
        fail: { call: { tool: 'write_note', args: { text: 'sneaky' } } },
      },
    };
    const config = {
      mcpServers: { notes: server },
      agents: {
        mcp: {
          tools: [{ server: 'notes' }],
          roles: { operator: { allow: ['tool:*'] } },
          users: { alice: ['operator'] },
        },
      },
    };
    url = (await h.startWorker({ AGENTS_CONFIG: writeConfig(config) })).url;
  });
  afterAll(async () => {
    await h.cleanup();
    await notes.stop();
  });

  it("carries the read call's answer as the value, reads it again before the approved call runs, and runs it once", async () => {
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ name: 'notes__write_note', args: { text: 'freeze' } }] }, { text: 'ok' }],
    });
    const [call] = await h.waitForPending(url, runId);
    expect(call.precondition).toMatchObject({ value: 'found freeze' });
    expect((await h.approvalRequest(call.callId))?.precondition).toMatchObject({ value: 'found freeze' });
    expect(notes.count('lookup')).toBe(1);
    expect(notes.count('write_note')).toBe(0);

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolMessages(view)[0].content).toBe('noted: freeze');
    expect(notes.count('lookup')).toBe(2);
    expect(notes.count('write_note')).toBe(1);
  });

  it('neither asks about nor runs a call whose precondition names a tool that is not auto', async () => {
    const [writes, fails] = [notes.count('write_note'), notes.count('fail')];
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [{ toolCalls: [{ id: 'pre-fail', name: 'notes__fail', args: {} }] }, { text: 'ok' }],
    });
    const view = await h.waitForStatus(url, runId, 'completed');
    expect(toolMessages(view)[0].content).toMatch(
      /not run and not sent for approval: its precondition could not be checked \(precondition: write_note is not an auto tool of notes\)/,
    );
    expect(await h.approvalRequest('pre-fail')).toBeUndefined();
    expect(notes.count('write_note')).toBe(writes);
    expect(notes.count('fail')).toBe(fails);
  });
});

// Secrets of tool providers never reach Redis (run state, approval requests, queues, audit), the logs or the metrics:
// the worker runs as its own process at LOG_LEVEL=debug; after runs that use every secret (a server that echoes the
// credential it got, one whose error page repeats a rejected one, a stdio server given one in its environment),
// every key of the test prefix and every log line are searched for each secret's value.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { WorkerHarness } from '../support/agent-worker-harness';
import { mcpAgentsConfig, writeConfig } from '../support/mcp-config';
import { bearer } from '../support/principals';
import { TestMcpServer } from '../support/test-mcp-server';
import { spawnWorker, stopProcess } from '../support/worker-process';

jest.setTimeout(90_000);

const SECRETS = {
  NOTES_MCP_TOKEN: 'notes-secret-7Qe2vL9x',
  GATE_MCP_TOKEN: 'gate-secret-Zk41mPq0',
  MCP_FS_TOKEN: 'fs-secret-Hy83nWc5',
};

describe('tool provider secrets', () => {
  const h = new WorkerHarness('mcp-secrets');
  const notes = new TestMcpServer(SECRETS.NOTES_MCP_TOKEN);
  // Expects another token than it is sent, and repeats the one it got in its 401 page.
  const gate = new TestMcpServer('the-token-gate-expects', true);
  const dir = mkdtempSync(join(tmpdir(), 'cs-mcp-secrets-'));
  let worker: { url: string; process: ChildProcess; output: () => string };

  beforeAll(async () => {
    writeFileSync(join(dir, 'notes.md'), 'hello\n');
    await Promise.all([notes.start(), gate.start()]);
    const config = mcpAgentsConfig(dir);
    (config.mcpServers as Record<string, unknown>).gate = {
      transport: 'http',
      url: gate.url,
      headers: { Authorization: { $secret: 'GATE_MCP_TOKEN', prefix: 'Bearer ' } },
      restart: { initialDelayMs: 200, maxDelayMs: 1000 },
    };
    ((config.agents as Record<string, { tools: unknown[] }>).mcp.tools as unknown[]).push({ server: 'gate' });
    worker = await spawnWorker(h, {
      AGENTS_CONFIG: writeConfig(config),
      NOTES_MCP_URL: notes.url,
      LOG_LEVEL: 'debug',
      ...SECRETS,
    });
  });
  afterAll(async () => {
    await stopProcess(worker?.process);
    await h.cleanup();
    await Promise.all([notes.stop(), gate.stop()]);
  });

  it('uses every secret and leaves none in Redis, the logs or the metrics', async () => {
    const { url } = worker;
    // An auto call whose server echoes the credential, a file read, a confirm call approved, one denied.
    const runId = await h.startRun(url, {
      agent: 'mcp',
      script: [
        {
          toolCalls: [
            { name: 'notes__whoami', args: {} },
            { name: 'fs__read_text_file', args: { path: join(dir, 'notes.md') } },
            { name: 'gate__lookup', args: { key: 'x' } },
          ],
        },
        {
          toolCalls: [
            { name: 'notes__write_note', args: { text: 'approved' } },
            { name: 'notes__write_note', args: { text: 'denied' } },
          ],
        },
        { text: 'done' },
      ],
    });
    const [approved, denied] = await h.waitForPending(url, runId, 2);
    await h.publishDecision(h.decision(runId, approved, 'approve'));
    await h.publishDecision(h.decision(runId, denied, 'deny', { reason: 'no' }));
    const view = await h.waitForStatus(url, runId, 'completed');

    // The secrets were really used: the server got its token, the gate its (wrong) one.
    expect(notes.authorizations).toContain(`Bearer ${SECRETS.NOTES_MCP_TOKEN}`);
    expect(gate.authorizations).toContain(`Bearer ${SECRETS.GATE_MCP_TOKEN}`);
    expect(notes.count('write_note')).toBe(1);
    // What the echoing server said reached the run, scrubbed.
    const tool = view.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(tool[0]).toBe('you sent: Bearer [secret NOTES_MCP_TOKEN]');

    const metrics = await (await fetch(`${url}/metrics`, { headers: bearer('scraper') })).text();
    const stored = await everythingStored(h.redis, h.prefixes.keyPrefix);
    const logs = worker.output();
    // The searches can find things: the run's results are in Redis, the gate's scrubbed error page in the logs.
    expect(stored).toContain('[secret NOTES_MCP_TOKEN]');
    expect(stored).toContain('noted: approved');
    expect(logs).toContain('[secret GATE_MCP_TOKEN]');
    expect(metrics).toContain('countersign_');
    for (const [name, value] of Object.entries(SECRETS)) {
      expect({ name, where: 'redis', found: stored.includes(value) }).toEqual({
        name,
        where: 'redis',
        found: false,
      });
      expect({ name, where: 'logs', found: logs.includes(value) }).toEqual({
        name,
        where: 'logs',
        found: false,
      });
      expect({ name, where: 'metrics', found: metrics.includes(value) }).toEqual({
        name,
        where: 'metrics',
        found: false,
      });
    }
  });
});

/** Every key of the prefix, read by its type, plus its DUMP: one string to search. */
async function everythingStored(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === 'string') value = await redis.get(key);
      else if (type === 'hash') value = await redis.hgetall(key);
      else if (type === 'list') value = await redis.lrange(key, 0, -1);
      else if (type === 'set') value = await redis.smembers(key);
      else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
      else if (type === 'stream') value = await redis.xrange(key, '-', '+');
      const dump = await redis.dumpBuffer(key);
      parts.push(key, JSON.stringify(value), dump?.toString('latin1') ?? '');
    }
  } while (cursor !== '0');
  if (parts.length === 0) throw new Error(`no keys under ${prefix}: the scan would prove nothing`);
  return parts.join('\n');
}

// The MCP gateway as a desktop client starts it: its own process (apps/mcp-gateway/src/main.ts) on stdin/stdout, the
// client's principal named by GATEWAY_CLIENT_TOKEN, logging at info (so a log line on stdout would break the protocol).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GatewayHarness } from '../support/gateway-harness';
import { testToken } from '../support/principals';

jest.setTimeout(90_000);

const root = join(__dirname, '..', '..');
const MAIN = [
  '-r',
  'ts-node/register/transpile-only',
  '-r',
  'tsconfig-paths/register',
  'apps/mcp-gateway/src/main.ts',
];
const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('MCP gateway on stdio', () => {
  let h: GatewayHarness;
  const clients: Client[] = [];
  /** What the clients could not read: a log line on stdout would be one. */
  const unreadable: Error[] = [];

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway-stdio');
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await h?.close();
  });

  async function stdioClient(as: string, env: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'desktop-test', version: '1.0.0' });
    client.onerror = (error) => unreadable.push(error);
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: MAIN,
        cwd: root,
        env: {
          ...h.env({ hold: { maxMs: 300, progressEveryMs: 250 } }),
          LOG_LEVEL: 'info',
          GATEWAY_TRANSPORT: 'stdio',
          GATEWAY_CLIENT_TOKEN: testToken(as),
          ...env,
        },
        stderr: 'ignore',
      }),
    );
    return client;
  }

  it('serves the principal its token names: its tools, an auto call, a confirm call waiting for approval', async () => {
    const alice = await stdioClient('alice');
    const names = (await alice.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['fs__read_text_file', 'ops__restart_service', 'notes__lookup']),
    );
    const read = await alice.callTool({
      name: 'fs__read_text_file',
      arguments: { path: join(h.dir, 'runbook.md') },
    });
    expect(text(read)).toContain('restart payments');
    const earlier = await h.approvals.pendingFor('bob');
    const waiting = await alice.callTool({
      name: 'notes__write_note',
      arguments: { text: 'from the desktop' },
    });
    expect(waiting.isError).toBe(true);
    expect(text(waiting)).toContain('waiting for approval');
    const pending = await h.approvals.waitForPending('bob', earlier);
    const request = await h.approvals.api<{ request: { requester: string; submittedBy: string } }>(
      'GET',
      `/approvals/${pending}`,
      'bob',
    );
    expect(request.json.request).toMatchObject({ requester: 'alice', submittedBy: 'mcp-gateway' });
    expect(h.notes.count('write_note')).toBe(0);

    const mallory = await stdioClient('mallory');
    expect((await mallory.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'ops__get_service_status',
      'ops__list_services',
    ]);
    expect(unreadable).toEqual([]);
  });

  it("counts the principal's tool calls (RATE_LIMIT_TOOL_CALLS): past it a call is refused, naming the limit", async () => {
    const bob = await stdioClient('bob', { RATE_LIMIT_TOOL_CALLS: '2/1m' });
    for (const key of ['a', 'b'])
      expect(text(await bob.callTool({ name: 'notes__lookup', arguments: { key } }))).toBe(`found ${key}`);
    const before = h.notes.count('lookup');
    await expect(bob.callTool({ name: 'notes__lookup', arguments: { key: 'c' } })).rejects.toThrow(
      /too many tool calls by bob: at most 2\/1m \(RATE_LIMIT_TOOL_CALLS\); retry after \d+ s/,
    );
    expect(h.notes.count('lookup')).toBe(before);
    expect((await bob.listTools()).tools.length).toBeGreaterThan(2);
  });

  it('refuses to start without a valid client token, naming the variable', async () => {
    const child = spawn(process.execPath, MAIN, {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        ...h.env(),
        GATEWAY_TRANSPORT: 'stdio',
        GATEWAY_CLIENT_TOKEN: 'not-a-token-of-anyone',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('GATEWAY_CLIENT_TOKEN: the token is not valid');
  });
});

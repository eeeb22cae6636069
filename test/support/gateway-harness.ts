// The MCP gateway with real parts around it: the approval service (its approvals API, ExternalHarness), the
// repository's ops MCP server over streamable HTTP, the published filesystem server over stdio (on a temp directory),
// and a counting test MCP server. Clients are the official SDK's, authenticated as test principals.
//
//   const h = await GatewayHarness.start('gateway');
//   const gateway = await h.startGateway({ hold: { maxMs: 1000 } });
//   const client = await h.client(gateway.url!, 'alice');
//
// The specs of test/mcp-gateway/ each start one; what they share (reading a result, its approval) is here too.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startMcpGateway, type RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { startOpsMcpServer, type RunningOpsMcpServer } from '../../apps/ops-mcp-server/src/bootstrap';
import { TEST_AUDIT_SECRET } from './audit';
import { ExternalHarness } from './external-harness';
import { FS_SERVER } from './mcp-config';
import { principalsConfig, testToken } from './principals';
import { TEST_REDIS_URL } from './redis';
import { TestMcpServer } from './test-mcp-server';

export const NOTES_TOKEN = 'notes-token-gateway-5d1c0e';

/** The text blocks of a call's result, one per line. */
export const resultText = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The approval ID a gateway answer carries in its `_meta`; throws when there is none. */
export function approvalOf(result: unknown): string {
  const meta = (result as CallToolResult)._meta?.['countersign/approval'] as
    { approvalId?: string } | undefined;
  if (!meta?.approvalId) throw new Error(`no approval in ${JSON.stringify(result)}`);
  return meta.approvalId;
}

/**
 * The gateway tests open sessions and call tools far faster than a person would, as one principal: explicit limits far
 * above the defaults (still counted on every request). The tests of the limits set their own, low ones.
 */
export const GATEWAY_TEST_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_SESSION_OPENS: '100000/1m',
  RATE_LIMIT_SESSION_OPENS_MACHINE: '100000/1m',
  RATE_LIMIT_TOOL_CALLS: '100000/1m',
  RATE_LIMIT_TOOL_CALLS_MACHINE: '100000/1m',
};

/** alice and bob operate (every tool); mallory only reads the ops server's status. */
export function gatewayConfig(dir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    mcpServers: {
      fs: {
        transport: 'stdio',
        command: process.execPath,
        args: [FS_SERVER, dir],
        tiers: { '*': 'confirm', 'read_*': 'auto', list_allowed_directories: 'auto' },
        restart: { initialDelayMs: 100, maxDelayMs: 1000 },
      },
      ops: {
        transport: 'http',
        url: { $env: 'OPS_MCP_URL' },
        headers: { Authorization: { $secret: 'GATEWAY_TOKEN', prefix: 'Bearer ' } },
        tiers: { 'get_*': 'auto', 'list_*': 'auto', '*_service': 'confirm', delete_volume: 'manual_only' },
      },
      notes: {
        transport: 'http',
        url: { $env: 'NOTES_MCP_URL' },
        headers: { Authorization: { $secret: 'NOTES_MCP_TOKEN', prefix: 'Bearer ' } },
        // write_note is raised to confirm by its destructiveHint.
        tiers: { '*': 'auto' },
      },
      // The same server again: its tools as `short_<tool>`, which the approval rules let expire in 1.5 s.
      short: {
        transport: 'http',
        url: { $env: 'NOTES_MCP_URL' },
        headers: { Authorization: { $secret: 'NOTES_MCP_TOKEN', prefix: 'Bearer ' } },
        prefix: 'short_',
        tiers: { '*': 'confirm' },
      },
    },
    roles: {
      operator: { allow: ['tool:*'] },
      viewer: { allow: ['tool:ops__get_service_status', 'tool:ops__list_services'] },
    },
    users: { alice: ['operator'], bob: ['operator'], mallory: ['viewer'] },
    ...extra,
  };
}

export class GatewayHarness {
  readonly notes = new TestMcpServer(NOTES_TOKEN);
  readonly dir = mkdtempSync(join(tmpdir(), 'cs-gateway-fs-'));
  approvals!: ExternalHarness;
  ops!: RunningOpsMcpServer;
  private readonly gateways: RunningMcpGateway[] = [];
  private readonly clients: Client[] = [];

  static async start(label: string): Promise<GatewayHarness> {
    const h = new GatewayHarness();
    writeFileSync(join(h.dir, 'runbook.md'), '# restart payments\nstep 1: drain\n');
    h.approvals = await ExternalHarness.start(label);
    await h.notes.start();
    h.ops = await startOpsMcpServer(
      {
        REDIS_URL: TEST_REDIS_URL,
        KEY_PREFIX: h.approvals.prefixes.keyPrefix,
        LOG_LEVEL: 'silent',
        PRINCIPALS_CONFIG: principalsConfig(),
        OPS_MCP_CALLERS: 'mcp-gateway',
      },
      { port: 0, host: '127.0.0.1' },
    );
    return h;
  }

  get keyPrefix(): string {
    return this.approvals.prefixes.keyPrefix;
  }

  /** The gateway's environment: `config` merges into gatewayConfig(), `env` adds or overrides variables. */
  env(config: Record<string, unknown> = {}, env: Record<string, string> = {}): Record<string, string> {
    return {
      REDIS_URL: TEST_REDIS_URL,
      KEY_PREFIX: this.keyPrefix,
      LOG_LEVEL: 'silent',
      PRINCIPALS_CONFIG: principalsConfig(),
      AUDIT_SIGNING_SECRET: TEST_AUDIT_SECRET,
      GATEWAY_CONFIG: JSON.stringify(gatewayConfig(this.dir, config)),
      APPROVAL_SERVICE_URL: this.approvals.url,
      GATEWAY_TOKEN: testToken('mcp-gateway'),
      OPS_MCP_URL: this.ops.url,
      NOTES_MCP_URL: this.notes.url,
      NOTES_MCP_TOKEN: NOTES_TOKEN,
      ...GATEWAY_TEST_RATE_LIMITS,
      ...env,
    };
  }

  async startGateway(
    config: Record<string, unknown> = {},
    env: Record<string, string> = {},
  ): Promise<RunningMcpGateway> {
    const gateway = await startMcpGateway(this.env(config, env), { port: 0, host: '127.0.0.1' });
    this.gateways.push(gateway);
    return gateway;
  }

  /** An MCP client of `url` with `as`'s bearer token (the official SDK's client over streamable HTTP). */
  async client(url: string, as: string): Promise<Client> {
    const client = new Client({ name: 'gateway-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${testToken(as)}` } },
      }),
    );
    this.clients.push(client);
    return client;
  }

  /** A client of one of the gateway's servers, directly (not through the gateway). The caller closes it. */
  async direct(server: 'fs' | 'ops' | 'notes'): Promise<Client> {
    const client = new Client({ name: 'direct-test', version: '1.0.0' });
    if (server === 'fs')
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [FS_SERVER, this.dir] }),
      );
    else
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server === 'ops' ? this.ops.url : this.notes.url), {
          requestInit: {
            headers: {
              Authorization: `Bearer ${server === 'ops' ? testToken('mcp-gateway') : NOTES_TOKEN}`,
            },
          },
        }),
      );
    return client;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(this.gateways.map((g) => g.close()));
    await this.ops?.close();
    await this.notes.stop();
    await this.approvals?.close();
  }
}

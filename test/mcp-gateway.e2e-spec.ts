// The MCP gateway driven by the official MCP client over streamable HTTP, in front of real servers: the published
// filesystem server (stdio), the repository's ops MCP server (streamable HTTP) and a counting test server. Approvals
// are the approval service's (its approvals API), decided by approvers through its REST API. What ran is counted at
// the server, read on disk, or read from the ops server's simulated infrastructure.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { InfraStore } from '@countersign/demo-infra';
import { createRedis, type RedisClient } from '@countersign/platform';
import type { RunningMcpGateway } from '../apps/mcp-gateway/src/bootstrap';
import { GatewayHarness, NOTES_TOKEN } from './support/gateway-harness';
import { FS_SERVER } from './support/mcp-config';
import { testToken } from './support/principals';
import { TEST_REDIS_URL, waitFor } from './support/redis';

jest.setTimeout(60_000);

const text = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('MCP gateway', () => {
  let h: GatewayHarness;
  /** Holds a confirm-tier call 600 ms: an undecided call answers quickly. */
  let gateway: RunningMcpGateway;
  let redis: RedisClient;
  let infra: InfraStore;
  let alice: Client;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway');
    gateway = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
    alice = await h.client(gateway.url!, 'alice');
    redis = createRedis({ url: TEST_REDIS_URL });
    infra = new InfraStore(redis, h.keyPrefix);
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  /** A client of a server, directly (not through the gateway). */
  async function direct(server: 'fs' | 'ops' | 'notes'): Promise<Client> {
    const client = new Client({ name: 'direct-test', version: '1.0.0' });
    if (server === 'fs')
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [FS_SERVER, h.dir] }));
    else
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server === 'ops' ? h.ops.url : h.notes.url), {
          requestInit: {
            headers: {
              Authorization: `Bearer ${server === 'ops' ? testToken('mcp-gateway') : NOTES_TOKEN}`,
            },
          },
        }),
      );
    return client;
  }

  const restarts = async (service: string) => (await infra.service(service))!.restarts;

  describe('listing', () => {
    it('lists every downstream tool under the gateway name, as the server lists it', async () => {
      const { tools } = await alice.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const [server, prefix] of [
        ['fs', 'fs__'],
        ['ops', 'ops__'],
        ['notes', 'notes__'],
      ] as const) {
        const client = await direct(server);
        try {
          const downstream = (await client.listTools()).tools;
          expect(downstream.length).toBeGreaterThan(0);
          for (const tool of downstream) {
            const listed = byName.get(`${prefix}${tool.name}`);
            const { execution: _gatewayTasks, name: _name, ...asListed } = listed ?? ({} as Tool);
            const { execution: _serverTasks, name: _own, ...asServed } = tool;
            expect({ tool: tool.name, listed: asListed }).toEqual({ tool: tool.name, listed: asServed });
          }
        } finally {
          await client.close();
        }
      }
    });

    it('says confirm-tier tools take tasks, and no others', async () => {
      const { tools } = await alice.listTools();
      const tasks = (name: string) => tools.find((t) => t.name === name)?.execution?.taskSupport;
      expect(tasks('ops__restart_service')).toBe('optional');
      expect(tasks('fs__write_file')).toBe('optional');
      expect(tasks('ops__get_service_status')).toBeUndefined();
      expect(tasks('ops__delete_volume')).toBeUndefined(); // listed, but manual-only: it never runs
      expect(tools.some((t) => t.name === 'ops__delete_volume')).toBe(true);
    });

    it('lists only what RBAC lets the principal call', async () => {
      const mallory = await h.client(gateway.url!, 'mallory');
      const { tools } = await mallory.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['ops__get_service_status', 'ops__list_services']);
      const refused = await mallory.callTool({ name: 'ops__restart_service', arguments: { service: 'api' } });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('lacks permission "tool:ops__restart_service"');
    });

    it('refuses a client without a valid bearer token', async () => {
      const res = await fetch(gateway.url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    });
  });

  describe('auto-tier calls', () => {
    it("answer with the server's own result: the filesystem server's", async () => {
      const fs = await direct('fs');
      try {
        const args = { path: join(h.dir, 'runbook.md') };
        const viaGateway = await alice.callTool({ name: 'fs__read_text_file', arguments: args });
        const own = await fs.callTool({ name: 'read_text_file', arguments: args });
        expect(viaGateway).toEqual(own);
        expect(text(viaGateway)).toContain('restart payments');
      } finally {
        await fs.close();
      }
    });

    it("answer with the server's own result: the ops server's", async () => {
      const ops = await direct('ops');
      try {
        const viaGateway = await alice.callTool({
          name: 'ops__get_service_status',
          arguments: { service: 'web' },
        });
        const own = await ops.callTool({ name: 'get_service_status', arguments: { service: 'web' } });
        expect(viaGateway).toEqual(own);
      } finally {
        await ops.close();
      }
    });

    it("pass the server's progress notifications through, and a cancellation back", async () => {
      const progress: number[] = [];
      const result = await alice.callTool({ name: 'notes__progress', arguments: { steps: 3 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      expect(text(result)).toBe('3 steps');
      expect(progress).toEqual([1, 2, 3]);

      const before = h.notes.cancelled;
      const controller = new AbortController();
      const call = alice.callTool({ name: 'notes__slow', arguments: { ms: 20_000 } }, undefined, {
        signal: controller.signal,
      });
      await waitFor(() => h.notes.calls.some((c) => c.tool === 'slow'), 'the slow call at the server');
      controller.abort();
      await expect(call).rejects.toThrow();
      await waitFor(() => h.notes.cancelled === before + 1, 'the cancellation at the server');
    });
  });

  describe('confirm-tier calls', () => {
    it('answer "waiting for approval" with the inbox link and expiry, and send the server nothing', async () => {
      const before = await restarts('payments');
      const result = await alice.callTool({
        name: 'ops__restart_service',
        arguments: { service: 'payments' },
      });
      expect(result.isError).toBe(true);
      const approval = result._meta?.['countersign/approval'] as {
        approvalId: string;
        inboxUrl: string;
        expiresAt: string;
      };
      expect(approval).toMatchObject({ status: 'pending', inboxUrl: expect.stringContaining('/inbox') });
      expect(text(result)).toContain('waiting for approval');
      expect(text(result)).toContain(approval.inboxUrl);
      expect(text(result)).toContain(approval.expiresAt);
      expect(text(result)).toContain('call this tool again with exactly the same arguments');
      expect(await h.approvals.pendingFor('bob')).toContain(approval.approvalId);
      expect(await restarts('payments')).toBe(before);
    });

    it('after approval an identical call runs it exactly once, and the next gets the same result', async () => {
      const args = { service: 'api' };
      const before = await restarts('api');
      const first = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      const { approvalId } = first._meta?.['countersign/approval'] as { approvalId: string };
      const again = await alice.callTool({ name: 'ops__restart_service', arguments: { ...args } });
      expect((again._meta?.['countersign/approval'] as { approvalId: string }).approvalId).toBe(approvalId);
      expect(await restarts('api')).toBe(before);

      await h.approvals.approve(approvalId);
      const ran = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      expect(ran.isError).toBeFalsy();
      expect(text(ran)).toContain('"name":"api"');
      expect(await restarts('api')).toBe(before + 1);

      const cached = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      expect(cached).toEqual(ran);
      expect(await restarts('api')).toBe(before + 1);
    });
  });
});

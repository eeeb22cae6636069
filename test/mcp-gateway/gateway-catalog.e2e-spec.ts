// The tools the MCP gateway serves (apps/mcp-gateway/src/tools/gateway-catalog.ts), as the official MCP client lists
// them over streamable HTTP: every downstream server's tools under the gateway's names, as the servers list them, only
// those RBAC lets the principal call, tasks offered for confirm-tier tools only.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { GatewayHarness, resultText as text } from '../support/gateway-harness';

jest.setTimeout(60_000);

describe('MCP gateway', () => {
  let h: GatewayHarness;
  let gateway: RunningMcpGateway;
  let alice: Client;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway-catalog');
    gateway = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
    alice = await h.client(gateway.url!, 'alice');
  });
  afterAll(async () => {
    await h?.close();
  });

  const direct = (server: 'fs' | 'ops' | 'notes') => h.direct(server);

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

  describe('with a Cedar policy set (GATEWAY_CONFIG policy.cedar)', () => {
    let cedarGateway: RunningMcpGateway;

    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cs-gw-cedar-'));
      copyFileSync('config/policies/schema.cedarschema', join(dir, 'schema.cedarschema'));
      writeFileSync(
        join(dir, 'gateway.cedar'),
        `@id("gw-read")
permit (principal == Principal::"alice", action == Action::"call", resource)
when { resource.tool == "ops__get_service_status" };

@id("gw-not-db")
forbid (principal, action, resource)
when { resource.args has service && resource.args.service == "db" };`,
      );
      cedarGateway = await h.startGateway({ policy: { cedar: dir } });
    });

    it('lets the policy decide each call in RBAC’s place: a permit runs, a forbid and no permit refuse', async () => {
      const client = await h.client(cedarGateway.url!, 'alice');
      const ok = await client.callTool({ name: 'ops__get_service_status', arguments: { service: 'api' } });
      expect(ok.isError).toBeFalsy();
      const forbidden = await client.callTool({
        name: 'ops__get_service_status',
        arguments: { service: 'db' },
      });
      expect(forbidden.isError).toBe(true);
      expect(text(forbidden)).toContain('forbidden by policy gw-not-db: resource.args has service');
      const unpermitted = await client.callTool({ name: 'ops__list_services', arguments: {} });
      expect(unpermitted.isError).toBe(true);
      expect(text(unpermitted)).toContain('no Cedar policy permits it');
    });

    it('lists every tool (a policy reads the arguments) and refuses what no policy permits', async () => {
      const mallory = await h.client(cedarGateway.url!, 'mallory');
      const { tools } = await mallory.listTools();
      expect(tools.map((t) => t.name)).toContain('ops__restart_service');
      const refused = await mallory.callTool({
        name: 'ops__get_service_status',
        arguments: { service: 'api' },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('no Cedar policy permits it');
    });
  });
});

// One call through the MCP gateway by its tier (apps/mcp-gateway/src/calls/gateway-calls.ts), driven by the official
// MCP client over streamable HTTP: an auto-tier call answers with the server's own result (progress and cancellation
// passed through), a manual-only tool is never forwarded. Confirm-tier calls: confirmed-calls.e2e-spec.ts.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InfraStore } from '@countersign/demo-infra';
import { createRedis, type RedisClient } from '@countersign/platform';
import type { RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { GatewayHarness, resultText as text } from '../support/gateway-harness';
import { TEST_REDIS_URL, waitFor } from '../support/redis';

jest.setTimeout(60_000);

describe('MCP gateway', () => {
  let h: GatewayHarness;
  let gateway: RunningMcpGateway;
  let redis: RedisClient;
  let infra: InfraStore;
  let alice: Client;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway-calls');
    gateway = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
    alice = await h.client(gateway.url!, 'alice');
    redis = createRedis({ url: TEST_REDIS_URL });
    infra = new InfraStore(redis, h.keyPrefix);
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  const direct = (server: 'fs' | 'ops' | 'notes') => h.direct(server);

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

  describe('manual-only tools', () => {
    it('are listed but never forwarded: the caller is told a person must do it', async () => {
      const result = await alice.callTool({ name: 'ops__delete_volume', arguments: { volume: 'pg-data' } });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('must be done by a person');
      expect((await infra.view()).volumes.map((v) => v.name)).toContain('pg-data');
    });
  });
});

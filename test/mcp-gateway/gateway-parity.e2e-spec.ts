// The MCP gateway at parity with the worker (issue 28): its metrics (tool calls by outcome, admission hook latency,
// shadow policy disagreements) on GET /metrics for a `metrics-reader` principal, or on METRICS_PORT; and a
// confirmationHandler in GATEWAY_CONFIG deciding confirm-tier calls in a person's place, never a manual-only one.
// Driven by the official MCP client through the running gateway, a real hook server and a real Cedar shadow set.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AuditLog } from '@countersign/audit';
import { createRedis, type RedisClient } from '@countersign/platform';
import { gatewayRunId } from '../../apps/mcp-gateway/src/calls/gateway-calls';
import type { RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { testAuditKeyring } from '../support/audit';
import { approvalOf, GatewayHarness, resultText as text } from '../support/gateway-harness';
import { HOOK_SECRET, HookServer } from '../support/hook-server';
import { bearer } from '../support/principals';
import { TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

/** A shadow set that permits every call but one on service "web": it disagrees with the JSON rules there. */
function shadowPolicies(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cs-gw-shadow-'));
  copyFileSync('config/policies/schema.cedarschema', join(dir, 'schema.cedarschema'));
  writeFileSync(
    join(dir, 'shadow.cedar'),
    `@id("shadow-all")
permit (principal, action, resource);

@id("shadow-not-web")
forbid (principal, action, resource)
when { resource.args has service && resource.args.service == "web" };`,
  );
  return dir;
}

describe('MCP gateway parity: metrics and the confirmation handler', () => {
  let h: GatewayHarness;
  const hook = new HookServer();
  let gateway: RunningMcpGateway;
  let redis: RedisClient;
  let audit: AuditLog;
  let alice: Client;

  const base = () => gateway.url!.replace(/\/mcp$/, '');
  const scrape = async (headers: Record<string, string> = bearer('scraper')) => {
    const res = await fetch(`${base()}/metrics`, { headers });
    return { status: res.status, text: await res.text() };
  };
  /** The figure of one series (0 when it is not there yet). */
  const figure = (metrics: string, series: string) => {
    const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const toolEntries = async (callId?: string) =>
    (await audit.read({ runId: gatewayRunId('alice') })).filter(
      (e) => e.type.startsWith('tool.') && (callId === undefined || e.callId === callId),
    );

  beforeAll(async () => {
    await hook.start();
    h = await GatewayHarness.start('gateway-parity');
    gateway = await h.startGateway(
      {
        admission: {
          beforeTool: [
            {
              name: 'gate',
              tools: ['ops__get_*'],
              url: `http://127.0.0.1:${hook.port}/before`,
              secretEnv: 'HOOK_SECRET',
              timeoutMs: 1_000,
            },
          ],
        },
        policy: { shadow: { cedar: shadowPolicies() } },
        confirmationHandler: {
          kind: 'rules',
          name: 'staging',
          rules: [
            {
              name: 'restart-web',
              tools: ['ops__restart_service'],
              when: { args: { service: 'web' } },
              decision: 'approve',
            },
            {
              name: 'no-scaling',
              tools: ['ops__scale_service'],
              decision: 'deny',
              reason: 'no scaling today',
            },
            // Matches, and is never consulted: the tool is manual-only.
            { name: 'volumes', tools: ['ops__delete_volume'], decision: 'approve' },
          ],
        },
        // A call people are asked about answers at once, with its approval.
        hold: { maxMs: 0 },
      },
      { HOOK_SECRET },
    );
    alice = await h.client(gateway.url!, 'alice');
    redis = createRedis({ url: TEST_REDIS_URL });
    audit = new AuditLog(redis, h.keyPrefix, 'test', testAuditKeyring());
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
    await hook.stop();
  });

  describe('GET /metrics', () => {
    it('counts a hook’s latency, a shadow disagreement and the call’s outcome, for a metrics-reader', async () => {
      const before = (await scrape()).text;
      const result = await alice.callTool({ name: 'ops__get_service_status', arguments: { service: 'web' } });
      expect(result.isError).toBeFalsy();
      expect(hook.calls.at(-1)).toMatchObject({ stage: 'before_tool', tool: 'ops__get_service_status' });

      const { status, text: after } = await scrape();
      expect(status).toBe(200);
      const grew = (series: string) => figure(after, series) - figure(before, series);
      expect(
        grew('countersign_admission_hook_seconds_count{hook="gate",stage="before_tool",outcome="allow"}'),
      ).toBe(1);
      // The JSON rules ran it (auto); the shadow would have refused it: counted, and it ran all the same.
      expect(grew('countersign_policy_shadow_disagreements_total{active="auto",shadow="denied"}')).toBe(1);
      expect(grew('countersign_tool_calls_total{outcome="executed"}')).toBe(1);
      expect(after).toContain('# TYPE countersign_policy_shadow_errors_total counter');
    });

    it('refuses a principal without the metrics-reader role (403) and a request without a credential (401)', async () => {
      const alicesTry = await scrape(bearer('alice'));
      expect(alicesTry.status).toBe(403);
      expect(alicesTry.text).toContain('metrics-reader');
      expect(alicesTry.text).not.toContain('countersign_');
      const anonymous = await scrape({});
      expect(anonymous.status).toBe(401);
      expect(anonymous.text).not.toContain('countersign_');
    });

    it('with METRICS_PORT: served there without credentials, and not on the HTTP port', async () => {
      const apart = await h.startGateway({}, { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
      expect(apart.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const served = await fetch(`${apart.metricsUrl}/metrics`);
      expect(served.status).toBe(200);
      expect(await served.text()).toContain('countersign_tool_calls_total');
      const main = await fetch(`${apart.url!.replace(/\/mcp$/, '')}/metrics`, { headers: bearer('scraper') });
      expect(main.status).toBe(404);
    });
  });

  describe('confirmationHandler', () => {
    it('a rule approving a confirm-tier call runs it with no approval request, audited as the handler', async () => {
      const result = (await alice.callTool({
        name: 'ops__restart_service',
        arguments: { service: 'web' },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result._meta?.['countersign/approval']).toBeUndefined();
      expect(text(result)).toMatch(/web/);
      const executed = (await toolEntries()).filter(
        (e) => e.type === 'tool.executed' && e.detail.toolName === 'ops__restart_service',
      );
      expect(executed).toEqual([
        expect.objectContaining({
          actor: 'handler:staging',
          detail: expect.objectContaining({ rule: 'restart-web' }),
        }),
      ]);
    });

    it('a call no rule matches is asked of people as before', async () => {
      const result = await alice.callTool({ name: 'ops__restart_service', arguments: { service: 'api' } });
      expect(approvalOf(result)).toEqual(expect.any(String));
    });

    it('a rule denying a call refuses it with its reason, audited as the handler', async () => {
      const result = await alice.callTool({
        name: 'ops__scale_service',
        arguments: { service: 'web', replicas: 4 },
      });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('no scaling today');
      const denied = (await toolEntries()).filter(
        (e) => e.type === 'tool.denied' && e.detail.toolName === 'ops__scale_service',
      );
      expect(denied).toEqual([
        expect.objectContaining({
          actor: 'handler:staging',
          detail: expect.objectContaining({ rule: 'no-scaling' }),
        }),
      ]);
    });

    it('never decides a manual-only call, even with a rule that matches it', async () => {
      const result = await alice.callTool({ name: 'ops__delete_volume', arguments: { volume: 'scratch' } });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('manual-only');
      const entries = (await toolEntries()).filter((e) => e.detail.toolName === 'ops__delete_volume');
      expect(entries.map((e) => [e.type, e.actor])).toEqual([['tool.denied', 'manual_only']]);
    });
  });
});

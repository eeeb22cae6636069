// The ops MCP server's tools (apps/ops-mcp-server/src/tools/served-ops-tools.ts) over streamable HTTP, behind the worker
// with the shipped agents config (config/agents.json): the demo's path. Restart counts and replicas in Redis are the
// proof of what ran. Who may call the server at all: ops-http.e2e-spec.ts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tokenSha256 } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { startOpsMcpServer, type RunningOpsMcpServer } from '../../apps/ops-mcp-server/src/bootstrap';
import { WorkerHarness } from '../support/agent-worker-harness';
import { principalsConfig } from '../support/principals';
import { redisEnv, waitFor } from '../support/redis';

jest.setTimeout(60_000);

const WORKER_TOKEN = 'agent-worker-test-token-0123456789';

/** The test principals plus the workers' machine client, the only caller the ops server lets in. */
function principals(): string {
  const config = JSON.parse(principalsConfig()) as { principals: object[] };
  config.principals.push({
    id: 'agent-worker',
    name: 'Agent workers',
    kind: 'machine',
    tokens: [{ sha256: tokenSha256(WORKER_TOKEN) }],
  });
  return JSON.stringify(config);
}

describe('ops MCP server', () => {
  const h = new WorkerHarness('ops-mcp');
  let ops: RunningOpsMcpServer;
  let worker: RunningAgentWorker;
  let url: string;

  beforeAll(async () => {
    const PRINCIPALS_CONFIG = principals();
    ops = await startOpsMcpServer(
      { ...redisEnv(h.prefixes), PRINCIPALS_CONFIG },
      { port: 0, host: '127.0.0.1' },
    );
    worker = await h.startWorker({
      AGENTS_CONFIG: 'config/agents.json',
      PRINCIPALS_CONFIG,
      OPS_MCP_URL: ops.url,
      OPS_MCP_TOKEN: WORKER_TOKEN,
    });
    url = worker.url;
  });
  afterAll(async () => {
    await h.cleanup();
    await ops.close();
  });

  it('serves the five ops tools with honest hints', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(ops.url), {
        requestInit: { headers: { authorization: `Bearer ${WORKER_TOKEN}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]))).toEqual({
        get_service_status: true,
        list_services: true,
        restart_service: false,
        scale_service: false,
        delete_volume: false,
      });
      expect(tools.find((t) => t.name === 'delete_volume')?.annotations?.destructiveHint).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('runs the demo runbook through the worker: auto at once, a restart once approved, a denied scale not at all, no deletion', async () => {
    const before = await h.infra(url);
    const payments = () => h.infra(url).then((i) => i.services.find((s) => s.name === 'payments')!);
    const runId = await h.startRun(url, {
      agent: 'ops',
      script: [
        { toolCalls: [{ name: 'get_service_status', args: { service: 'payments' } }] },
        { toolCalls: [{ name: 'restart_service', args: { service: 'payments' } }] },
        { toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 6 } }] },
        { toolCalls: [{ name: 'delete_volume', args: { volume: 'scratch' } }] },
        { text: 'done' },
      ],
    });
    const [restart] = await h.waitForPending(url, runId);
    expect(restart).toMatchObject({ toolName: 'restart_service', tier: 'confirm' });
    expect((await payments()).restarts).toBe(0);
    await h.publishDecision(h.decision(runId, restart, 'approve'));

    // The restart stays pending until the decision is applied: wait for the next turn's call.
    const scale = await waitFor(async () => {
      const [call] = (await h.run(url, runId)).pending;
      return call?.toolName === 'scale_service' ? call : undefined;
    }, 'the scale to be pending');
    expect((await payments()).restarts).toBe(1);
    await h.publishDecision(h.decision(runId, scale, 'deny', { reason: 'not now' }));

    const view = await h.waitForStatus(url, runId, 'completed');
    const tools = view.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(JSON.parse(tools[0])).toMatchObject({ name: 'payments', status: 'degraded', restarts: 0 });
    expect(JSON.parse(tools[1])).toMatchObject({ name: 'payments', status: 'healthy', restarts: 1 });
    expect(tools[2]).toMatch(/denied by the user\. Reason: not now/);
    expect(tools[3]).toMatch(/must be done by a person/);
    const after = await h.infra(url);
    expect(after.services.find((s) => s.name === 'payments')).toMatchObject({ restarts: 1, replicas: 2 });
    expect(after.volumes).toEqual(before.volumes);
  });

  it("keeps the agent's RBAC: a viewer's restart is refused before the server is asked", async () => {
    const before = (await h.infra(url)).services.find((s) => s.name === 'web')!.restarts;
    const runId = await h.startRun(
      url,
      {
        agent: 'ops',
        script: [{ toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] }, { text: 'no' }],
      },
      'mallory',
    );
    const view = await h.waitForStatus(url, runId, 'completed', 'run completed', 'mallory');
    expect(view.messages.find((m) => m.role === 'tool')?.content).toMatch(
      /lacks permission "tool:restart_service"/,
    );
    expect((await h.infra(url)).services.find((s) => s.name === 'web')!.restarts).toBe(before);
  });
});

// Issue 29, part 3, through the whole system (agent worker + approval service): approvals bound to the state they saw.
// An HTTP tool declares a precondition (a GET of the service's replica count) against a real local API that counts
// every scale request it receives: that count is the proof of what ran. A precondition that changed between the
// approval and the execution stops the call and asks again with the new value; one that held lets it run once; one
// that cannot be evaluated (the API answers 500) means the tool never runs. The built-in scale_service declares one
// too (the demo infrastructure's replica count).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApprovalView, ChatMessage, RunView } from '@countersign/contracts';
import { InfraStore } from '@countersign/demo-infra';
import { Redis } from 'ioredis';
import { writeConfig } from './support/mcp-config';
import { TEST_REDIS_URL, waitFor } from './support/redis';
import { TestSystem } from './support/system';

jest.setTimeout(60_000);

/** A stand-in for an internal API: replica counts to read, and scale requests that it counts. */
class ReplicasApi {
  readonly replicas = new Map<string, number>();
  /** Services whose read answers 500 (their precondition cannot be evaluated). */
  readonly broken = new Set<string>();
  readonly scaled: { service: string; replicas: number }[] = [];
  reads = 0;
  private server?: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const [, , service, action] = new URL(req.url!, 'http://x').pathname.split('/');
        if (req.method === 'GET' && !action) {
          this.reads++;
          if (this.broken.has(service)) return void res.writeHead(500).end('metrics store unavailable');
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ replicas: this.replicas.get(service) ?? 0 }));
        }
        if (req.method === 'POST' && action === 'scale') {
          const { replicas } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { replicas: number };
          this.scaled.push({ service, replicas });
          this.replicas.set(service, replicas);
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ service, replicas }));
        }
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  executions(service: string): number {
    return this.scaled.filter((s) => s.service === service).length;
  }
}

const api = new ReplicasApi();
let system: TestSystem;
let redis: Redis;
let infra: InfraStore;

beforeAll(async () => {
  await api.start();
  const base = `http://127.0.0.1:${api.port}`;
  const agents = writeConfig({
    httpTools: {
      set_replicas: {
        description: 'Sets the replica count of a service.',
        method: 'POST',
        url: `${base}/services/{service}/scale`,
        args: {
          type: 'object',
          properties: {
            service: { type: 'string', minLength: 1 },
            replicas: { type: 'integer', minimum: 0 },
          },
          required: ['service', 'replicas'],
          additionalProperties: false,
        },
        preview: '{service} → {replicas} replicas',
        precondition: { url: `${base}/services/{service}`, timeoutMs: 1_000 },
      },
    },
    agents: {
      guarded: {
        tools: ['set_replicas', 'scale_service'],
        roles: { operator: { allow: ['tool:*'] } },
        users: { alice: ['operator'] },
      },
    },
  });
  system = await TestSystem.start('preconditions', { workerEnv: { AGENTS_CONFIG: agents } });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  infra = new InfraStore(redis, system.prefixes.keyPrefix);
});
afterAll(async () => {
  await system?.close();
  redis?.disconnect();
  await api.stop();
});

/** alice's run that asks to scale `service` to `replicas` with `tool`, parked: its call and its request as shown. */
async function parkedScale(tool: 'set_replicas' | 'scale_service', service: string, replicas: number) {
  const runId = await system.startRun(
    [{ toolCalls: [{ name: tool, args: { service, replicas } }] }, { text: 'scaled' }],
    { agent: 'guarded' },
  );
  const call = await system.waitForPendingCall(runId);
  const view = await system.waitForApproval(call.callId, 'bob');
  return { runId, callId: call.callId, view };
}

async function approve(id: string): Promise<void> {
  const answer = await system.api('POST', `/approvals/${id}/decisions`, 'bob', { decision: 'approve' });
  expect(answer.status).toBe(200);
}

/** The request the run's call waits for now, once it is another than `previous`. */
async function nextRequest(runId: string, previous: string): Promise<ApprovalView> {
  const requestId = await waitFor(async () => {
    const view = await system.run(runId);
    const waiting = view.status === 'awaiting_confirmation' ? view.pending[0]?.requestId : undefined;
    return waiting && waiting !== previous ? waiting : undefined;
  }, `run ${runId} asking again`);
  return system.waitForApproval(requestId, 'bob');
}

const toolContents = (view: RunView) =>
  view.messages
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool')
    .map((m) => m.content);

it('asks again, and runs nothing, when the precondition changed between the approval and the execution', async () => {
  api.replicas.set('payments', 6);
  const { runId, callId, view } = await parkedScale('set_replicas', 'payments', 4);
  expect(view.request.precondition).toMatchObject({ value: { replicas: 6 } });
  expect(view.request.precondition).not.toHaveProperty('previous');

  // Someone else scales payments to 9 while the request waits; bob approves what he saw (6 → 4).
  api.replicas.set('payments', 9);
  await approve(view.request.requestId);

  const again = await nextRequest(runId, view.request.requestId);
  expect(again.request).toMatchObject({
    callId,
    reason: 'precondition_changed',
    attempt: 1,
    args: { service: 'payments', replicas: 4 },
    precondition: { value: { replicas: 9 }, previous: { replicas: 6 } },
  });
  expect(api.executions('payments')).toBe(0);
  expect(api.replicas.get('payments')).toBe(9);
  const changed = await system.waitForAudit(callId, 'tool.precondition_changed', 'auditor');
  expect(changed.detail).toMatchObject({ old: { replicas: 6 }, new: { replicas: 9 } });
  const audit = await system.audit({ runId }, 'auditor');
  expect(audit.filter((e) => e.type === 'tool.started' || e.type === 'tool.executed')).toEqual([]);

  // Approved again for the world as it is now: it runs, once.
  await approve(again.request.requestId);
  await system.waitForStatus(runId, 'completed');
  expect(api.scaled).toContainEqual({ service: 'payments', replicas: 4 });
  expect(api.executions('payments')).toBe(1);
});

it('runs the approved call exactly once when the precondition held', async () => {
  api.replicas.set('orders', 3);
  const readsBefore = api.reads;
  const { runId, view } = await parkedScale('set_replicas', 'orders', 5);
  expect(view.request.precondition).toMatchObject({ value: { replicas: 3 } });
  await approve(view.request.requestId);
  const done = await system.waitForStatus(runId, 'completed');
  expect(api.executions('orders')).toBe(1);
  expect(api.replicas.get('orders')).toBe(5);
  // Read when asked about, and once more right before it ran.
  expect(api.reads - readsBefore).toBe(2);
  expect(toolContents(done)[0]).toContain('"replicas":5');
});

it('neither asks nor runs when the precondition cannot be evaluated when the call is asked for', async () => {
  api.replicas.set('search', 2);
  api.broken.add('search');
  const runId = await system.startRun(
    [{ toolCalls: [{ name: 'set_replicas', args: { service: 'search', replicas: 0 } }] }, { text: 'ok' }],
    { agent: 'guarded' },
  );
  const done = await system.waitForStatus(runId, 'completed');
  expect(toolContents(done)[0]).toMatch(
    /not run and not sent for approval: its precondition could not be checked/,
  );
  expect(api.executions('search')).toBe(0);
  const audit = await system.audit({ runId }, 'auditor');
  expect(audit.some((e) => e.type === 'request.created')).toBe(false);
  api.broken.delete('search');
});

it('does not run an approved call whose precondition cannot be evaluated right before it runs', async () => {
  api.replicas.set('billing', 2);
  const { runId, callId, view } = await parkedScale('set_replicas', 'billing', 7);
  api.broken.add('billing');
  await approve(view.request.requestId);
  const done = await system.waitForStatus(runId, 'completed');
  expect(toolContents(done)[0]).toMatch(
    /approved but did not run: its precondition could not be checked again/,
  );
  expect(api.executions('billing')).toBe(0);
  const failed = await system.waitForAudit(callId, 'tool.precondition_failed', 'auditor');
  expect(failed.detail).toMatchObject({ toolName: 'set_replicas' });
  api.broken.delete('billing');
});

it("binds the built-in scale_service's approval to the replica count the approver saw", async () => {
  const before = (await system.service('web')).replicas;
  const { runId, view } = await parkedScale('scale_service', 'web', before + 1);
  expect(view.request.precondition).toMatchObject({ value: { replicas: before } });
  await infra.scale('web', before + 3);
  await approve(view.request.requestId);
  const again = await nextRequest(runId, view.request.requestId);
  expect(again.request.precondition).toMatchObject({
    value: { replicas: before + 3 },
    previous: { replicas: before },
  });
  expect((await system.service('web')).replicas).toBe(before + 3);
  await approve(again.request.requestId);
  await system.waitForStatus(runId, 'completed');
  expect((await system.service('web')).replicas).toBe(before + 1);
});

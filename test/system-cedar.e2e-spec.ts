// Cedar policies through the whole system (issue 28): the worker asks the example policy set (config/policies) in
// RBAC's place. A transfer above 1,000 goes to finance with quorum 2 (the approval service routes it there and shows
// the policy), one below runs at its tier, a forbid beats a permit, no permit is a refusal, a shadow set's
// disagreement is counted on /metrics and decides nothing, and an invalid policy stops the worker naming it.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, RunView } from '@countersign/contracts';
import { workerEnv } from './support/agent-worker-harness';
import { UX_APPROVALS } from './support/approver-ux';
import { writeConfig } from './support/mcp-config';
import { bearer } from './support/principals';
import { uniquePrefixes } from './support/redis';
import { TestSystem } from './support/system';
import { WORKER_MAIN_ARGS } from './support/worker-process';

jest.setTimeout(60_000);

const EXAMPLE = 'config/policies';
const SCHEMA = join(EXAMPLE, 'schema.cedarschema');

/** A stand-in for a payments API: each POST /transfers is a transfer that ran. */
class Bank {
  transfers: unknown[] = [];
  port = 0;
  private server?: Server;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.transfers.push(JSON.parse(body || '{}'));
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

/** A policy directory: the example schema and one policy file. */
function policyDir(file: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cs-cedar-'));
  copyFileSync(SCHEMA, join(dir, 'schema.cedarschema'));
  writeFileSync(join(dir, file), text);
  return dir;
}

function agentsConfig(bankUrl: string, policy: Record<string, unknown>): Record<string, unknown> {
  return {
    httpTools: {
      transfer: {
        description: 'Sends money.',
        method: 'POST',
        url: `${bankUrl}/transfers`,
        args: {
          type: 'object',
          properties: { amount: { type: 'integer' }, currency: { type: 'string' } },
          required: ['amount'],
          additionalProperties: false,
        },
        tier: 'auto',
      },
    },
    policy,
    agents: {
      ops: {
        tools: ['transfer', 'get_service_status'],
        // With a Cedar set active these JSON rules are not asked (they would allow every call).
        roles: { operator: { allow: ['tool:*'] } },
        users: { alice: ['operator'], mallory: ['operator'] },
      },
    },
  };
}

const toolResults = (view: RunView) =>
  view.messages
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool')
    .map((m) => m.content);

describe('a Cedar policy set in the running services', () => {
  const bank = new Bank();
  let system: TestSystem;

  beforeAll(async () => {
    await bank.start();
    // The shadow lets every transfer of payments run at once: it disagrees with the active set above 1,000.
    const shadow = policyDir(
      'lenient.cedar',
      `@id("shadow-any-transfer")
permit (principal in Group::"payments", action == Action::"call", resource)
when { resource.tool == "transfer" };`,
    );
    const agents = agentsConfig(`http://127.0.0.1:${bank.port}`, {
      cedar: EXAMPLE,
      shadow: { cedar: shadow },
    });
    system = await TestSystem.start('cedar', {
      workerEnv: { AGENTS_CONFIG: writeConfig(agents) },
      approvalEnv: { APPROVALS_CONFIG: JSON.stringify(UX_APPROVALS) },
    });
  });
  afterAll(async () => {
    await system?.close();
    await bank.stop();
  });

  async function shadowDisagreements(active: string, shadow: string): Promise<number> {
    const res = await fetch(`${system.workerUrl}/metrics`, { headers: bearer('scraper') });
    expect(res.status).toBe(200);
    const line = (await res.text())
      .split('\n')
      .find((l) =>
        l.startsWith(`countersign_policy_shadow_disagreements_total{active="${active}",shadow="${shadow}"}`),
      );
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('sends a transfer above 1,000 to finance with quorum 2, shows the policy, and the shadow decides nothing', async () => {
    const runId = await system.startRun([
      { toolCalls: [{ name: 'transfer', args: { amount: 1500, currency: 'EUR' } }] },
      { text: 'done' },
    ]);
    const call = await system.waitForPendingCall(runId);
    expect(call).toMatchObject({ toolName: 'transfer', tier: 'confirm' });
    const view = await system.waitForApproval(call.callId, 'dave');
    expect(view).toMatchObject({
      status: 'pending',
      groups: ['finance'],
      quorum: 2,
      route: {
        rule: 'policy payments-quorum',
        why: 'resource.tool == "transfer" && resource.args has amount && resource.args.amount > 1000',
      },
    });
    const created = await system.waitForAudit(call.callId, 'request.created', 'dave');
    expect(created.detail).toMatchObject({
      rule: 'policy payments-quorum',
      why: 'resource.tool == "transfer" && resource.args has amount && resource.args.amount > 1000',
      groups: ['finance'],
      quorum: 2,
    });
    // The shadow said "auto": counted, and the call still waits for people.
    expect(await shadowDisagreements('confirm', 'auto')).toBeGreaterThanOrEqual(1);
    expect(bank.transfers).toHaveLength(0);
    // ops (bob) may not decide it.
    const byBob = await system.api('POST', `/approvals/${call.callId}/decisions`, 'bob', {
      decision: 'approve',
    });
    expect(byBob.status).toBe(404);

    await system.api('POST', `/approvals/${call.callId}/decisions`, 'dave', { decision: 'approve' });
    expect((await system.run(runId)).status).toBe('awaiting_confirmation');
    await system.api('POST', `/approvals/${call.callId}/decisions`, 'carol', { decision: 'approve' });
    await system.waitForStatus(runId, 'completed');
    expect(bank.transfers).toEqual([{ amount: 1500, currency: 'EUR' }]);
  });

  it('runs a transfer of 1,000 or less at its own tier (auto), with no request', async () => {
    const before = bank.transfers.length;
    const runId = await system.startRun([
      { toolCalls: [{ name: 'transfer', args: { amount: 400 } }] },
      { text: 'ok' },
    ]);
    const done = await system.waitForStatus(runId, 'completed');
    expect(done.pending).toEqual([]);
    expect(bank.transfers.slice(before)).toEqual([{ amount: 400 }]);
  });

  it('lets a forbid beat a permit: mallory (in payments) is refused and nothing is sent', async () => {
    const before = bank.transfers.length;
    const runId = await system.startRun(
      [{ toolCalls: [{ name: 'transfer', args: { amount: 400 } }] }, { text: 'ok' }],
      {},
      'mallory',
    );
    const done = await system.waitForStatus(runId, 'completed', 15_000, 'mallory');
    expect(toolResults(done)).toEqual([
      expect.stringMatching(/^Tool "transfer" was refused: forbidden by policy no-viewers-writing: unless /),
    ]);
    expect(bank.transfers.length).toBe(before);
  });

  it('refuses a call no permit matches (alice is not an operator: no policy lets her read a service)', async () => {
    const runId = await system.startRun([
      { toolCalls: [{ name: 'get_service_status', args: { service: 'web' } }] },
      { text: 'ok' },
    ]);
    const done = await system.waitForStatus(runId, 'completed');
    expect(toolResults(done)).toEqual([
      'Tool "get_service_status" was refused: no Cedar policy permits it. It did not run.',
    ]);
  });
});

describe('an invalid policy', () => {
  it('stops the worker at start-up, naming the policy, its file and line', async () => {
    const dir = policyDir(
      'payments.cedar',
      `@id("payments-small")
permit (principal, action, resource);

@id("payments-quorum")
@groups("finance")
permit (principal in Group::"payments", action == Action::"call", resource)
when { resource.args has amount && resource.args.amount > "1000" };`,
    );
    const env = workerEnv(uniquePrefixes('cedar-bad'), {
      AGENTS_CONFIG: writeConfig(agentsConfig('http://127.0.0.1:9', { cedar: dir })),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    const child = spawn(process.execPath, [...WORKER_MAIN_ARGS], {
      cwd: join(__dirname, '..'),
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(output).toContain(
      `AGENTS_CONFIG: policy.cedar: ${join(dir, 'payments.cedar')}:7: policy "payments-quorum": `,
    );
    expect(output).toMatch(/expected Long but saw String/);
  });
});

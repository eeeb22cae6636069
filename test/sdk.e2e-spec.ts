// @countersign/sdk against a running approval service and the test Redis: guard() runs a call only once Countersign
// approved exactly its arguments, once, across processes; and the built package is plain Node.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as authorization from '@countersign/authorization';
import {
  CountersignClient,
  fingerprint,
  notRunMessage,
  verifyWebhook,
  WEBHOOK_HEADERS,
  type ExternalCall,
  type GuardResult,
} from '@countersign/sdk';
import { buildSdk, GuardProcess, requiredModules } from './support/built-sdk';
import { ExternalHarness, rewritingOnBehalfOf, WEBHOOK_SIGNING_SECRET } from './support/external-harness';
import { testToken } from './support/principals';
import { waitFor } from './support/redis';

jest.setTimeout(60_000);

let harness: ExternalHarness;
let client: CountersignClient;
let sdkDir: string;
const work = mkdtempSync(join(tmpdir(), 'countersign-sdk-test-'));
let runs = 0;

beforeAll(async () => {
  [harness, sdkDir] = await Promise.all([
    ExternalHarness.start('sdk', { WEBHOOK_ALLOWED_ORIGINS: 'http://127.0.0.1:9' }),
    buildSdk(),
  ]);
  client = new CountersignClient({ baseUrl: harness.url, token: testToken('agent-bot') });
});

afterAll(async () => {
  await harness?.close();
});

function refund(over: Partial<ExternalCall> = {}): ExternalCall {
  return {
    runId: `sdk-run-${++runs}`,
    callId: 'call-1',
    toolName: 'refund_order',
    args: { orderId: '1234', amount: 25 },
    ...over,
  };
}

/** A tool that counts its runs and keeps the arguments it got. */
function countingTool() {
  const calls: Record<string, unknown>[] = [];
  return {
    calls,
    execute: async (args: Record<string, unknown>) => {
      calls.push(args);
      return `refunded ${String(args.amount)}`;
    },
  };
}

/** The approval of a guarded call, once approvers can see it. */
async function pendingApproval(call: ExternalCall): Promise<string> {
  const fp = fingerprint(call.toolName, call.args);
  return waitFor(async () => {
    const { json } = await harness.api<{ request: { callId: string; fingerprint: string; runId: string } }[]>(
      'GET',
      '/approvals?status=pending',
      'bob',
    );
    return json.find((a) => a.request.runId === call.runId && a.request.fingerprint === fp)?.request.callId;
  }, `the approval of ${call.runId}`);
}

describe('guard', () => {
  it('runs nothing before the decision, then the approved arguments exactly once', async () => {
    const tool = countingTool();
    const call = refund();
    const guarded = client.guard(call, tool.execute, { summarize: (v) => v });
    const approvalId = await pendingApproval(call);
    expect(tool.calls).toHaveLength(0);
    await harness.approve(approvalId);
    const result = await guarded;
    expect(result).toEqual({ status: 'executed', approvalId, value: 'refunded 25', reported: true });
    expect(tool.calls).toEqual([call.args]);
    const audit = await harness.audit(approvalId);
    expect(audit.find((e) => e.type === 'tool.executed')?.detail).toMatchObject({
      outcome: 'ok',
      summary: 'refunded 25',
    });
  });

  it('does not run a denied call, and says why', async () => {
    const tool = countingTool();
    const call = refund();
    const guarded = client.guard(call, tool.execute);
    await harness.deny(await pendingApproval(call), 'refunds are frozen');
    expect(await guarded).toMatchObject({
      status: 'denied',
      reason: 'refunds are frozen',
      decidedBy: 'person',
    });
    expect(tool.calls).toHaveLength(0);
  });

  it('does not run a call an approver responded to: the response, who gave it, and the words for the model', async () => {
    const tool = countingTool();
    const call = refund();
    const guarded = client.guard(call, tool.execute);
    const approvalId = await pendingApproval(call);
    const text = 'Refund 20, not 25: the shipping is not refundable.';
    await harness.respond(approvalId, text);
    const result = await guarded;
    expect(result).toEqual({
      status: 'responded',
      approvalId,
      toolName: 'refund_order',
      response: text,
      approvers: ['bob'],
    });
    expect(tool.calls).toHaveLength(0);
    expect(notRunMessage(result as Exclude<GuardResult<unknown>, { status: 'executed' }>)).toBe(
      'Tool "refund_order" was not run: the approver (bob) responded instead of approving. ' +
        `This is their response, not the tool's output: ${text}`,
    );
    // The approvals API says it in its own words; a claim of a responded call is refused.
    const view = await client.get(approvalId, {});
    expect(view).toMatchObject({
      status: 'respond',
      response: text,
      approvers: ['bob'],
      decidedBy: 'person',
    });
    expect(await client.claim(approvalId, view.fingerprint, {})).toMatchObject({
      status: 'refused',
      reason: 'denied',
    });
  });

  it('does not run a call that expired', async () => {
    const tool = countingTool();
    const result = await client.guard(refund({ toolName: 'short_refund' }), tool.execute);
    expect(result.status).toBe('expired');
    expect(tool.calls).toHaveLength(0);
  });

  it('answers pending after its timeout; guarding the call again reattaches, and a claimed call never runs again', async () => {
    const tool = countingTool();
    const call = refund();
    const first = await client.guard(call, tool.execute, { timeoutMs: 200 });
    expect(first.status).toBe('pending');

    // A new process (a new client) guards the same call after a restart: the same approval.
    const restarted = new CountersignClient({ baseUrl: harness.url, token: testToken('agent-bot') });
    const again = restarted.guard(call, tool.execute);
    await harness.approve(first.approvalId);
    expect(await again).toMatchObject({ status: 'executed', approvalId: first.approvalId });

    const third = await client.guard(call, tool.execute);
    expect(third).toMatchObject({ status: 'already_claimed', approvalId: first.approvalId });
    expect((third as Extract<GuardResult<string>, { status: 'already_claimed' }>).completion?.outcome).toBe(
      'ok',
    );
    expect(tool.calls).toHaveLength(1);
  });

  it('guards other arguments as another call', async () => {
    const tool = countingTool();
    const call = refund();
    const first = client.guard(call, tool.execute);
    await harness.approve(await pendingApproval(call));
    await first;
    const bigger = await client.guard({ ...call, args: { orderId: '1234', amount: 2500 } }, tool.execute, {
      timeoutMs: 200,
    });
    expect(bigger.status).toBe('pending');
    expect(tool.calls).toEqual([call.args]);
  });

  it('reports a failed execution and throws its error', async () => {
    const call = refund();
    const guarded = client.guard(call, async () => {
      throw new Error('payment provider down');
    });
    const approvalId = await pendingApproval(call);
    await harness.approve(approvalId);
    await expect(guarded).rejects.toThrow('payment provider down');
    const view = await client.get(approvalId);
    expect(view.claim?.completion).toMatchObject({ outcome: 'error', summary: 'payment provider down' });
  });

  it('stops waiting when its signal aborts: pending, and nothing ran', async () => {
    const tool = countingTool();
    const controller = new AbortController();
    const guarded = client.guard(refund(), tool.execute, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    expect((await guarded).status).toBe('pending');
    expect(tool.calls).toHaveLength(0);
  });

  it('fails closed when the service cannot be reached: it throws, nothing runs', async () => {
    const tool = countingTool();
    const nowhere = new CountersignClient({
      baseUrl: 'http://127.0.0.1:9',
      token: 'x',
      requestTimeoutMs: 2_000,
    });
    await expect(nowhere.guard(refund(), tool.execute)).rejects.toThrow('did not answer');
    expect(tool.calls).toHaveLength(0);
  });

  it('fails closed with a token that is not a client’s', async () => {
    const tool = countingTool();
    const wrong = new CountersignClient({ baseUrl: harness.url, token: testToken('alice') });
    await expect(wrong.guard(refund(), tool.execute)).rejects.toMatchObject({ status: 403 });
    expect(tool.calls).toHaveLength(0);
  });
});

describe('guard and the requester (issue 24, finding 2)', () => {
  // team-bot may act for alice and for bob.
  const team = () => new CountersignClient({ baseUrl: harness.url, token: testToken('team-bot') });
  const wire = (onBehalfOf: string): ExternalCall => ({
    runId: `sdk-run-${++runs}`,
    callId: 'call-9',
    toolName: 'wire_money',
    args: { to: 'acct-9', amount: 900 },
    onBehalfOf,
  });

  it('never runs a call for bob on the approval alice’s same call got', async () => {
    const client = team();
    const forAlice = wire('alice');
    const alices = await client.submit(forAlice);
    await harness.approve(alices.approvalId, 'bob');
    const tool = countingTool();
    const forBob = await client.guard({ ...forAlice, onBehalfOf: 'bob' }, tool.execute, { timeoutMs: 300 });
    expect(forBob.status).toBe('pending');
    expect(forBob.approvalId).not.toBe(alices.approvalId);
    expect(tool.calls).toHaveLength(0);
    // alice's call runs on alice's approval, once.
    expect(await client.guard(forAlice, tool.execute)).toMatchObject({
      status: 'executed',
      approvalId: alices.approvalId,
    });
    expect(tool.calls).toEqual([forAlice.args]);
  });

  it('refuses an approval whose requester is not the caller’s user, whatever the service answered', async () => {
    const forAlice = wire('alice');
    const alices = await team().submit(forAlice);
    await harness.approve(alices.approvalId, 'bob');
    // A proxy on the way rewrites who the call is for, so the service answers bob's call with alice's approval:
    // guard() compares the approval's requester with the call's user itself, and nothing runs.
    const proxied = new CountersignClient({
      baseUrl: harness.url,
      token: testToken('team-bot'),
      fetch: rewritingOnBehalfOf('bob', 'alice'),
    });
    const tool = countingTool();
    await expect(proxied.guard({ ...forAlice, onBehalfOf: 'bob' }, tool.execute)).rejects.toThrow(
      `approval ${alices.approvalId} is alice's, not bob's; not run`,
    );
    expect(tool.calls).toHaveLength(0);
    expect((await team().get(alices.approvalId, { onBehalfOf: 'alice' })).claim).toBeUndefined();
  });
});

describe('the fingerprint', () => {
  it('is the services’ own function', () => {
    expect(fingerprint).toBe(authorization.fingerprint);
  });
});

describe('webhooks', () => {
  it('verifyWebhook accepts what the service signs with this client’s secret, from Node or fetch headers', async () => {
    const secret = await client.webhookSecret();
    const body = JSON.stringify({
      type: 'approval.decided',
      approval: await client.submit(refund()),
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = authorization.webhookSignature(secret, timestamp, body);
    const nodeHeaders = { [WEBHOOK_HEADERS.timestamp]: timestamp, [WEBHOOK_HEADERS.signature]: signature };
    expect(verifyWebhook({ secret, body, headers: nodeHeaders }).type).toBe('approval.decided');
    expect(verifyWebhook({ secret, body, headers: new Headers(nodeHeaders) }).approval.status).toBe(
      'pending',
    );
    expect(() => verifyWebhook({ secret: WEBHOOK_SIGNING_SECRET, body, headers: nodeHeaders })).toThrow(
      'signature mismatch',
    );
  });
});

describe('the built package, in plain-Node processes', () => {
  it('requires nothing of Nest, Redis or BullMQ, nor any other part of this repository', () => {
    const packages = (skip: string[] = []) =>
      [...requiredModules(join(sdkDir, 'dist'), skip)]
        .filter((m) => !m.startsWith('.') && !m.startsWith('node:'))
        .sort();
    // The core needs its two dependencies. The OpenAI Agents adapter adds its framework, a peer dependency; the AI
    // SDK adapter uses only `ai`'s types (the AI SDK calls it), so its JavaScript requires nothing more.
    expect(packages(['openai-agents', 'ai-sdk'])).toEqual(['canonicalize', 'zod']);
    expect(packages()).toEqual(['@openai/agents', 'canonicalize', 'zod']);
    const pkg = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['canonicalize', 'zod']);
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['@openai/agents', 'ai']);
  });

  function guardProcess(call: ExternalCall, counterFile: string) {
    return new GuardProcess({
      sdkDir,
      url: harness.url,
      token: testToken('agent-bot'),
      call,
      counterFile,
    });
  }

  it('lets exactly one of two processes guarding the same approved call run it', async () => {
    const counter = join(work, 'two-processes');
    writeFileSync(counter, '');
    const call = refund();
    const processes = [guardProcess(call, counter), guardProcess(call, counter)];
    const approvalId = await pendingApproval(call);
    await waitFor(() => processes.every((p) => p.lines.length > 0), 'both processes guarding');
    await harness.approve(approvalId);
    const results = await Promise.all(processes.map((p) => p.result()));
    expect(results.map((r) => r.status).sort()).toEqual(['already_claimed', 'executed']);
    expect(results.every((r) => r.approvalId === approvalId && r.heavy.length === 0)).toBe(true);
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('runs the call once when the process waiting for it was killed and a new one guards it', async () => {
    const counter = join(work, 'killed');
    writeFileSync(counter, '');
    const call = refund();
    const first = guardProcess(call, counter);
    const approvalId = await pendingApproval(call);
    first.kill();
    await first.exited;
    await harness.approve(approvalId);
    expect(readFileSync(counter, 'utf8')).toBe('');
    const second = guardProcess(call, counter);
    expect(await second.result()).toMatchObject({ status: 'executed', approvalId });
    const third = guardProcess(call, counter);
    expect(await third.result()).toMatchObject({ status: 'already_claimed', approvalId });
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

// The OpenAI Agents SDK adapter (@countersign/sdk/openai-agents) with the real @openai/agents 0.20 and its scripted
// model (@openai/agents/testing), against a running approval service and the test Redis.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, run, RunState } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { CountersignClient } from '@countersign/sdk';
import {
  CountersignAgents,
  FileParkedRunStore,
  MemoryParkedRunStore,
  type CountersignRunOutcome,
} from '@countersign/sdk/openai-agents';
import { ExternalHarness, rewritingOnBehalfOf } from './support/external-harness';
import { ScriptProcess } from './support/script-process';
import { testToken } from './support/principals';

jest.setTimeout(60_000);

let harness: ExternalHarness;
let client: CountersignClient;
const storeDir = mkdtempSync(join(tmpdir(), 'countersign-agents-'));
let runs = 0;

beforeAll(async () => {
  harness = await ExternalHarness.start('openai-agents');
  client = new CountersignClient({ baseUrl: harness.url, token: testToken('agent-bot') });
});

afterAll(async () => {
  await harness?.close();
});

/** An agent with one guarded tool that counts its runs, and a model that calls it once, then answers. */
function refundAgent(countersign: CountersignAgents, toolName = 'refund_order') {
  const ran: { orderId: string; amount: number }[] = [];
  const model = new ScriptedModel([
    [functionCall(toolName, { orderId: '1234', amount: 25 }, { callId: 'call-refund' })],
    [assistantMessage('done')],
  ]);
  const refund = countersign.tool({
    name: toolName,
    description: 'Refund an order',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async (input) => {
      ran.push(input);
      return `refunded ${input.amount}`;
    },
  });
  const agent = new Agent({ name: 'support', instructions: 'Help customers.', model, tools: [refund] });
  return { agent, model, ran };
}

function parked(outcome: CountersignRunOutcome) {
  if (outcome.status !== 'parked') throw new Error(`expected a parked run, got ${outcome.status}`);
  return outcome;
}

/** What the model was sent on its last turn, as text (tool results included). */
const lastInput = (model: ScriptedModel) => JSON.stringify(model.lastCall?.request.input);

describe('the OpenAI Agents SDK adapter', () => {
  it('parks the run, runs nothing before the decision, then runs the approved call once', async () => {
    const countersign = new CountersignAgents({ client, store: new FileParkedRunStore(storeDir) });
    const { agent, model, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId, onBehalfOf: 'alice' }));
    expect(outcome.approvals).toEqual([
      expect.objectContaining({ callId: 'call-refund', toolName: 'refund_order', status: 'pending' }),
    ]);
    expect(ran).toHaveLength(0);
    // Undecided: resuming leaves it parked.
    expect((await countersign.resume(agent, runId)).status).toBe('parked');
    expect(ran).toHaveLength(0);

    await harness.approve(outcome.approvals[0].approvalId);
    const done = await countersign.resume(agent, runId);
    expect(done.status).toBe('completed');
    expect(done.status === 'completed' && done.result.finalOutput).toBe('done');
    expect(ran).toEqual([{ orderId: '1234', amount: 25 }]);
    expect(lastInput(model)).toContain('refunded 25');
    const view = await client.get(outcome.approvals[0].approvalId, { onBehalfOf: 'alice' });
    expect(view).toMatchObject({ requester: 'alice', claim: { completion: { outcome: 'ok' } } });
    await expect(countersign.resume(agent, runId)).rejects.toThrow('no parked run');
  });

  it('does not run a denied call, and the model gets the reason', async () => {
    const countersign = new CountersignAgents({ client, store: new FileParkedRunStore(storeDir) });
    const { agent, model, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId }));
    await harness.deny(outcome.approvals[0].approvalId, 'order 1234 was already refunded');
    const done = await countersign.resume(agent, runId);
    expect(done.status).toBe('completed');
    expect(ran).toHaveLength(0);
    expect(lastInput(model)).toContain(
      'Tool execution was denied by bob. Reason: order 1234 was already refunded',
    );
  });

  it("does not run a call an approver responded to, and the model gets the approver's text, naming them", async () => {
    const countersign = new CountersignAgents({ client, store: new FileParkedRunStore(storeDir) });
    const { agent, model, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId }));
    await harness.respond(outcome.approvals[0].approvalId, 'Refund 20, not 25: shipping is not refundable.');
    const done = await countersign.resume(agent, runId);
    expect(done.status).toBe('completed');
    expect(ran).toHaveLength(0);
    expect(lastInput(model)).toContain(
      'Tool \\"refund_order\\" was not run: the approver (bob) responded instead of approving. ' +
        "This is their response, not the tool's output: Refund 20, not 25: shipping is not refundable.",
    );
  });

  it('does not run a call whose approval expired', async () => {
    const countersign = new CountersignAgents({ client, store: new FileParkedRunStore(storeDir) });
    const { agent, model, ran } = refundAgent(countersign, 'short_refund');
    const runId = `agents-${++runs}`;
    parked(await countersign.run(agent, 'refund order 1234', { runId }));
    const done = await countersign.resume(agent, runId, { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    expect(ran).toHaveLength(0);
    expect(lastInput(model)).toContain('the approval request expired');
  });

  it('refuses a call whose arguments were changed in the stored state after approval', async () => {
    const store = new FileParkedRunStore(storeDir);
    const countersign = new CountersignAgents({ client, store });
    const { agent, model, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId }));
    await harness.approve(outcome.approvals[0].approvalId);

    const file = join(storeDir, `run-${runId}.json`);
    const stored = readFileSync(file, 'utf8');
    const edited = stored.replace(/\\\\\\"amount\\\\\\":25/g, '\\\\\\"amount\\\\\\":2500');
    expect(edited).not.toBe(stored);
    writeFileSync(file, edited);

    const done = await countersign.resume(agent, runId);
    expect(done.status).toBe('completed');
    expect(ran).toHaveLength(0);
    expect(lastInput(model)).toContain('its arguments changed after approval');
  });

  it('refuses a call whose stored state and recorded fingerprint were both changed', async () => {
    const store = new FileParkedRunStore(storeDir);
    const countersign = new CountersignAgents({ client, store });
    const { agent, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId }));
    await harness.approve(outcome.approvals[0].approvalId);
    const record = (await store.load(runId))!;
    const { fingerprint } = await import('@countersign/sdk');
    await store.save({
      ...record,
      state: record.state.replace(/\\"amount\\":25/g, '\\"amount\\":2500'),
      approvals: record.approvals.map((a) => ({
        ...a,
        fingerprint: fingerprint('refund_order', { orderId: '1234', amount: 2500 }),
      })),
    });
    expect((await countersign.resume(agent, runId)).status).toBe('completed');
    expect(ran).toHaveLength(0);
  });

  it('runs nothing when the state is approved by hand, past Countersign', async () => {
    const store = new FileParkedRunStore(storeDir);
    const countersign = new CountersignAgents({ client, store });
    const { agent, model, ran } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    parked(await countersign.run(agent, 'refund order 1234', { runId }));
    const state = await RunState.fromString(agent, (await store.load(runId))!.state);
    for (const item of state.getInterruptions()) state.approve(item);
    const result = await run(agent, state);
    expect(result.finalOutput).toBe('done');
    expect(ran).toHaveLength(0);
    expect(lastInput(model)).toContain('waiting for approval');
  });
});

describe('the OpenAI Agents SDK adapter and the requester (issue 24, finding 2)', () => {
  // team-bot may act for alice and for bob.
  const teamClient = () => new CountersignClient({ baseUrl: harness.url, token: testToken('team-bot') });

  /** alice's run parked on its refund, approved by bob. */
  async function approvedForAlice(client: CountersignClient) {
    const countersign = new CountersignAgents({ client, store: new MemoryParkedRunStore() });
    const { agent } = refundAgent(countersign);
    const runId = `agents-${++runs}`;
    const outcome = parked(await countersign.run(agent, 'refund order 1234', { runId, onBehalfOf: 'alice' }));
    await harness.approve(outcome.approvals[0].approvalId, 'bob');
    return { runId, approvalId: outcome.approvals[0].approvalId };
  }

  it('parks bob’s run of the same call on an approval of its own; nothing runs', async () => {
    const client = teamClient();
    const alice = await approvedForAlice(client);
    const countersign = new CountersignAgents({ client, store: new MemoryParkedRunStore() });
    const { agent, ran } = refundAgent(countersign);
    const outcome = await countersign.run(agent, 'refund order 1234', {
      runId: alice.runId,
      onBehalfOf: 'bob',
    });
    expect(outcome.status).toBe('parked');
    expect(parked(outcome).approvals).toEqual([
      expect.objectContaining({ status: 'pending', approvalId: expect.not.stringMatching(alice.approvalId) }),
    ]);
    expect(ran).toHaveLength(0);
  });

  it('runs nothing for bob when the service answers with alice’s approval', async () => {
    const alice = await approvedForAlice(teamClient());
    // A proxy on the way rewrites who the calls are for: the adapter checks the requester itself.
    const proxied = new CountersignClient({
      baseUrl: harness.url,
      token: testToken('team-bot'),
      fetch: rewritingOnBehalfOf('bob', 'alice'),
    });
    const countersign = new CountersignAgents({ client: proxied, store: new MemoryParkedRunStore() });
    const { agent, ran } = refundAgent(countersign);
    // The run stops with the adapter's refusal (its needsApproval asks Countersign, and fails closed).
    await expect(
      countersign.run(agent, 'refund order 1234', { runId: alice.runId, onBehalfOf: 'bob' }),
    ).rejects.toThrow(`approval ${alice.approvalId} is alice's, not bob's; not run`);
    expect(ran).toHaveLength(0);
    expect((await teamClient().get(alice.approvalId, { onBehalfOf: 'alice' })).claim).toBeUndefined();
  });
});

describe('the OpenAI Agents SDK adapter across processes', () => {
  it('resumes in a new process after the waiting one was killed, and the tool runs once', async () => {
    const counter = join(storeDir, 'killed-counter');
    writeFileSync(counter, '');
    const runId = `agents-${++runs}`;
    const env = {
      COUNTERSIGN_URL: harness.url,
      COUNTERSIGN_TOKEN: testToken('agent-bot'),
      STORE_DIR: storeDir,
      RUN_ID: runId,
      COUNTER_FILE: counter,
    };
    const first = new ScriptProcess('agents-run-process.ts', { ...env, MODE: 'start' });
    const { approvals } = await first.waitForEvent<{ approvals: { approvalId: string }[] }>('parked');
    await first.kill();
    await harness.approve(approvals[0].approvalId);
    expect(readFileSync(counter, 'utf8')).toBe('');

    const second = new ScriptProcess('agents-run-process.ts', { ...env, MODE: 'resume' });
    expect(await second.waitForEvent('completed')).toMatchObject({ finalOutput: 'done' });
    expect(await second.exited).toBe(0);
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

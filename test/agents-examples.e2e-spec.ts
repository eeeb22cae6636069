// The examples of the guide to agents Countersign does not run (examples/agents/*.ts), verbatim in
// docs/guides/external-agents.md and run here against a running approval service: a person approves through the
// REST API, the call runs once.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import type { ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { refundWithApproval } from '../examples/agents/guard';
import { chatTurn } from '../examples/agents/ai-sdk';
import { supportDesk } from '../examples/agents/openai-agents';
import { ExternalHarness } from './support/external-harness';
import { testToken } from './support/principals';

jest.setTimeout(60_000);

let harness: ExternalHarness;
const token = testToken('agent-bot');

beforeAll(async () => {
  harness = await ExternalHarness.start('agents-examples');
});

afterAll(async () => {
  await harness?.close();
});

const root = join(__dirname, '..');

it.each(['guard.ts', 'openai-agents.ts', 'ai-sdk.ts'])(
  'the guide shows examples/agents/%s as it is',
  (file) => {
    const guide = readFileSync(join(root, 'docs', 'guides', 'external-agents.md'), 'utf8');
    const example = readFileSync(join(root, 'examples', 'agents', file), 'utf8');
    expect(guide).toContain('```ts\n' + example + '```');
  },
);

it('guard: the refund runs once a person approved it', async () => {
  const refunded = refundWithApproval(harness.url, token, { id: '4711', orderId: '1234' });
  await harness.approve(await harness.waitForPending('bob'));
  expect(await refunded).toBe('refunded 25 on order 1234');
  // Guarded again (a retry, a restart): the call is not run again.
  expect(await refundWithApproval(harness.url, token, { id: '4711', orderId: '1234' })).toBe(
    'already_claimed',
  );
});

it('guard: a denied refund does not run, and says why', async () => {
  const refused = refundWithApproval(harness.url, token, { id: '4712', orderId: '1234' });
  await harness.deny(await harness.waitForPending('bob'), 'already refunded');
  expect(await refused).toBe('refused: already refunded');
});

it('OpenAI Agents SDK: the run parks, is approved, and finishes with the refund run once', async () => {
  const model = new ScriptedModel([
    [functionCall('refund_order', { orderId: '1234', amount: 25 }, { callId: 'call-1' })],
    [assistantMessage('Your refund is on its way.')],
  ]);
  const desk = supportDesk({
    baseUrl: harness.url,
    token,
    storeDir: mkdtempSync(join(tmpdir(), 'countersign-example-')),
    model,
  });
  const started = await desk.start('ticket-4713', 'Please refund order 1234');
  expect(started.status).toBe('parked');
  const finished = desk.finish('ticket-4713');
  await harness.approve(started.status === 'parked' ? started.approvals[0].approvalId : '');
  const outcome = await finished;
  expect(outcome.status === 'completed' && outcome.result.finalOutput).toBe('Your refund is on its way.');
  expect(JSON.stringify(model.lastCall?.request.input)).toContain('refunded 25 on order 1234');
});

it('AI SDK: the turn asks, the next turn gets the decision and runs the refund once', async () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const prompts: unknown[] = [];
  const turns = [
    {
      content: [
        {
          type: 'tool-call' as const,
          toolCallId: 'call-1',
          toolName: 'refund_order',
          input: '{"orderId":"1234","amount":25}',
        },
      ],
      finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    {
      content: [{ type: 'text' as const, text: 'Your refund is on its way.' }],
      finishReason: { unified: 'stop' as const, raw: 'stop' },
      usage,
      warnings: [],
    },
  ];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      return turns[prompts.length - 1];
    },
  });
  const options = { baseUrl: harness.url, token, chatId: 'chat-4714', model };
  const first = await chatTurn(options, [{ role: 'user', content: 'Please refund order 1234' }]);
  // The history travels as JSON between the chat client and the server.
  const history = JSON.parse(JSON.stringify(first.messages)) as ModelMessage[];
  const second = chatTurn(options, history);
  await harness.approve(await harness.waitForPending('bob'));
  expect((await second).text).toBe('Your refund is on its way.');
  expect(JSON.stringify(prompts.at(-1))).toContain('refunded 25 on order 1234');
});

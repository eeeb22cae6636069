// An AI SDK process for the restart test. `start`: the model calls the refund tool, the AI SDK asks for approval, the
// history is stored in MESSAGES_FILE, {"event":"waiting"} is printed and the process waits for Countersign's decision
// (it is killed meanwhile). `resume`: reads the history, gets the decisions, continues the chat. The tool appends this
// process's ID to COUNTER_FILE when it runs. Environment: MODE, COUNTERSIGN_URL, COUNTERSIGN_TOKEN, MESSAGES_FILE,
// RUN_ID, COUNTER_FILE.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { generateText, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { CountersignClient } from '@countersign/sdk';
import { approvalResponses, countersignTools } from '@countersign/sdk/ai-sdk';

const env = process.env as Record<string, string>;
const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

async function main(): Promise<void> {
  const client = new CountersignClient({ baseUrl: env.COUNTERSIGN_URL, token: env.COUNTERSIGN_TOKEN });
  const options = { client, runId: env.RUN_ID };
  const tools = countersignTools(
    {
      refund_order: tool({
        description: 'Refund an order',
        inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
        execute: async ({ amount }) => {
          appendFileSync(env.COUNTER_FILE, `${process.pid}\n`);
          return `refunded ${amount}`;
        },
      }),
    },
    options,
  );
  // One model turn in each process: the tool call when starting, the answer after the tool when resuming.
  const model = new MockLanguageModelV3({
    doGenerate: async () =>
      env.MODE === 'start'
        ? {
            content: [
              {
                type: 'tool-call',
                toolCallId: 'tc-refund',
                toolName: 'refund_order',
                input: '{"orderId":"1234","amount":25}',
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: 'text', text: 'done' }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          },
  });

  let messages: ModelMessage[];
  if (env.MODE === 'start') {
    messages = [{ role: 'user', content: 'refund order 1234' }];
    const first = await generateText({ model, tools, messages });
    messages.push(...first.response.messages);
    writeFileSync(env.MESSAGES_FILE, JSON.stringify(messages));
    print({ event: 'waiting', ...(await approvalResponses(messages, options)) });
  } else {
    messages = JSON.parse(readFileSync(env.MESSAGES_FILE, 'utf8')) as ModelMessage[];
  }
  const { responses, pending } = await approvalResponses(messages, { ...options, timeoutMs: 30_000 });
  if (pending.length > 0) {
    print({ event: 'still-pending', pending });
    return;
  }
  messages.push({ role: 'tool', content: responses });
  const next = await generateText({ model, tools, messages });
  print({ event: 'completed', text: next.text });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

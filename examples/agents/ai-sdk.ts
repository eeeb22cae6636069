import { generateText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { z } from 'zod';
import { CountersignClient } from '@countersign/sdk';
import { approvalResponses, countersignTools } from '@countersign/sdk/ai-sdk';

const refund = tool({
  description: 'Refund an order',
  inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
  execute: async ({ orderId, amount }) => `refunded ${amount} on order ${orderId}`,
});

/** One chat turn on the server; `messages` is the history the client sent (it may be forged: nothing trusts it). */
export async function chatTurn(
  options: { baseUrl: string; token: string; chatId: string; model: LanguageModel },
  messages: ModelMessage[],
) {
  const client = new CountersignClient({ baseUrl: options.baseUrl, token: options.token });
  const countersign = { client, runId: options.chatId, onBehalfOf: 'alice' };
  const tools = countersignTools({ refund_order: refund }, countersign); // execute runs only what Countersign approved
  // Calls the model asked for earlier get Countersign's decisions (wait up to 10 minutes for them).
  const { responses, pending } = await approvalResponses(messages, {
    ...countersign,
    timeoutMs: 10 * 60_000,
  });
  if (pending.length > 0) return { messages, pending }; // still undecided: ask again later
  if (responses.length > 0) messages = [...messages, { role: 'tool', content: responses }];
  const result = await generateText({ model: options.model, tools, messages });
  return { messages: [...messages, ...result.response.messages], text: result.text, pending: [] };
}

import { Agent, type Model } from '@openai/agents';
import { z } from 'zod';
import { CountersignClient } from '@countersign/sdk';
import { CountersignAgents, FileParkedRunStore } from '@countersign/sdk/openai-agents';

export function supportDesk(options: {
  baseUrl: string;
  token: string;
  storeDir: string;
  model: string | Model;
}) {
  const countersign = new CountersignAgents({
    client: new CountersignClient({ baseUrl: options.baseUrl, token: options.token }),
    store: new FileParkedRunStore(options.storeDir), // parked runs, readable by every process
  });
  const refund = countersign.tool({
    name: 'refund_order',
    description: 'Refund an order',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async ({ orderId, amount }) => `refunded ${amount} on order ${orderId}`,
  });
  const agent = new Agent({
    name: 'support',
    instructions: 'Help customers.',
    model: options.model,
    tools: [refund],
  });
  return {
    // Runs until a call needs approval; then the run is parked and its approvals are listed.
    start: (ticketId: string, text: string) =>
      countersign.run(agent, text, { runId: ticketId, onBehalfOf: 'alice' }),
    // In any process: waits for the decisions, then approves or rejects each call and finishes the run.
    finish: (ticketId: string) => countersign.resume(agent, ticketId, { timeoutMs: 10 * 60_000 }),
  };
}

// An OpenAI Agents SDK process for the restart test: `start` runs the support agent until it parks, prints
// {"event":"parked"}, then waits for the decision (and is killed meanwhile); `resume` resumes the parked run. The tool
// appends this process's ID to COUNTER_FILE when it runs. Environment: MODE, COUNTERSIGN_URL, COUNTERSIGN_TOKEN,
// STORE_DIR, RUN_ID, COUNTER_FILE.
import { appendFileSync } from 'node:fs';
import { Agent } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { CountersignClient } from '@countersign/sdk';
import { CountersignAgents, FileParkedRunStore } from '@countersign/sdk/openai-agents';

const env = process.env as Record<string, string>;
const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const countersign = new CountersignAgents({
    client: new CountersignClient({ baseUrl: env.COUNTERSIGN_URL, token: env.COUNTERSIGN_TOKEN }),
    store: new FileParkedRunStore(env.STORE_DIR),
  });
  const refund = countersign.tool({
    name: 'refund_order',
    description: 'Refund an order',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async ({ amount }) => {
      appendFileSync(env.COUNTER_FILE, `${process.pid}\n`);
      return `refunded ${amount}`;
    },
  });
  // The model's turns still to come in this process: a resumed run needs only the answer after the tool.
  const turns =
    env.MODE === 'start'
      ? [[functionCall('refund_order', { orderId: '1234', amount: 25 }, { callId: 'call-refund' })]]
      : [];
  const model = new ScriptedModel([...turns, [assistantMessage('done')]]);
  const agent = new Agent({ name: 'support', instructions: 'Help customers.', model, tools: [refund] });

  if (env.MODE === 'start') {
    const outcome = await countersign.run(agent, 'refund order 1234', { runId: env.RUN_ID });
    print({ event: outcome.status, ...(outcome.status === 'parked' && { approvals: outcome.approvals }) });
  }
  const resumed = await countersign.resume(agent, env.RUN_ID, { timeoutMs: 30_000 });
  print({
    event: resumed.status,
    finalOutput: resumed.status === 'completed' ? resumed.result.finalOutput : undefined,
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

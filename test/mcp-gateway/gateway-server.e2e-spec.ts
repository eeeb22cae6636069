// The MCP server of a gateway session (apps/mcp-gateway/src/mcp/gateway-server.ts) for a client that asks for MCP tasks:
// a confirm-tier call becomes a task that waits for its decision and runs once approved, never once cancelled.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { GatewayHarness, resultText as text } from '../support/gateway-harness';

jest.setTimeout(60_000);

describe('MCP gateway', () => {
  let h: GatewayHarness;
  let gateway: RunningMcpGateway;
  let alice: Client;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway-server');
    gateway = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
    alice = await h.client(gateway.url!, 'alice');
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('MCP tasks', () => {
    it('a confirm-tier call becomes a task that runs once when approved', async () => {
      await alice.listTools(); // the client learns which tools take tasks
      const earlier = await h.approvals.pendingFor('bob');
      const stream = alice.experimental.tasks.callToolStream(
        { name: 'notes__write_note', arguments: { text: 'as a task' } },
        CallToolResultSchema,
      );
      const seen: string[] = [];
      let result: CallToolResult | undefined;
      for await (const message of stream) {
        seen.push(message.type);
        if (message.type === 'taskCreated') {
          const approvalId = await h.approvals.waitForPending('bob', earlier);
          expect(h.notes.calls.filter((c) => c.args.text === 'as a task')).toHaveLength(0);
          await h.approvals.approve(approvalId);
        }
        if (message.type === 'result') result = message.result as CallToolResult;
        if (message.type === 'error') throw message.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(text(result)).toBe('noted: as a task');
      expect(h.notes.calls.filter((c) => c.args.text === 'as a task')).toHaveLength(1);
    });

    it('a cancelled task never runs its call, even once approved', async () => {
      await alice.listTools();
      const earlier = await h.approvals.pendingFor('bob');
      const stream = alice.experimental.tasks.callToolStream(
        { name: 'notes__write_note', arguments: { text: 'cancelled task' } },
        CallToolResultSchema,
      );
      const first = await stream.next();
      expect(first.value?.type).toBe('taskCreated');
      const taskId = (first.value as { task: { taskId: string } }).task.taskId;
      const approvalId = await h.approvals.waitForPending('bob', earlier);
      await alice.experimental.tasks.cancelTask(taskId);
      await h.approvals.approve(approvalId);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(h.notes.calls.filter((c) => c.args.text === 'cancelled task')).toHaveLength(0);
      expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      await stream.return(undefined);
    });
  });
});

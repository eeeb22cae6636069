// An approval gate is a call of this built-in tool: tier `confirm`, so it parks the runbook and goes through routing
// (quorum, channels, expiry) like any call; it changes nothing, and its result only says the gate was passed.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '@countersign/authorization';
import { RUNBOOK_GATE_TOOL } from '@countersign/contracts';

export const GATE_PASSED = 'approved: the gate was passed';

export function gateTool(): ToolDefinition {
  return defineTool({
    name: RUNBOOK_GATE_TOOL,
    description: 'A human checkpoint of a runbook: approving lets the runbook go on past this step.',
    args: z
      .object({
        runbook: z.string().min(1).max(40),
        node: z.string().min(1).max(400),
        message: z.string().min(1).max(2_000),
      })
      .strict(),
    tier: 'confirm',
    handler: () => GATE_PASSED,
    preview: (args) => args.message,
  });
}

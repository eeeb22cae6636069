// Test fixtures: tools whose handlers count their executions, so "never executes" is an assertion on a number.
import { z } from 'zod';
import type { Tier } from '@countersign/contracts';
import type { CallerContext } from '../tool';
import { defineTool, type ToolDefinition } from '../tool';

export interface CountingTool {
  definition: ToolDefinition;
  /** How many times the handler ran. */
  readonly executions: number;
  /** Arguments of every execution, in order. */
  readonly seen: unknown[];
}

export const serviceArgs = z.object({ service: z.string().min(1) });

/** A tool named `name` whose handler returns `result` (or `restarted <service>`) and counts its runs. */
export function countingTool(
  name: string,
  tier: Tier = 'auto',
  handler?: (args: { service: string }, ctx: CallerContext & { callId: string }) => unknown,
): CountingTool {
  const seen: unknown[] = [];
  const definition = defineTool({
    name,
    description: `test tool ${name}`,
    args: serviceArgs,
    tier,
    handler: (args, ctx) => {
      seen.push(args);
      return handler ? handler(args, ctx) : `${name} ${args.service}`;
    },
  });
  return {
    definition: definition as ToolDefinition,
    get executions() {
      return seen.length;
    },
    seen,
  };
}

export const caller: CallerContext = { runId: 'run-1', agent: 'ops', userId: 'alice', scopes: ['admin'] };

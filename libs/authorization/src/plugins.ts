// Before/after-tool callbacks. A plugin may allow, skip (its content goes to the model) or abort the run.
import type { Tier } from '@countersign/contracts';
import type { CallerContext } from './tool';

export interface BeforeToolContext extends CallerContext {
  callId: string;
  toolName: string;
  /** Arguments after the tool's schema parsed them. */
  args: unknown;
  tier: Tier;
}

export type BeforeToolVerdict =
  { action: 'allow' } | { action: 'skip'; content: string } | { action: 'abort'; reason: string };

export interface AfterToolContext extends BeforeToolContext {
  result: unknown;
}

export interface ToolPlugin {
  name: string;
  /** Returning nothing means allow. Throwing refuses the call (fail closed). */
  beforeTool?(ctx: BeforeToolContext): BeforeToolVerdict | void | Promise<BeforeToolVerdict | void>;
  /** Return `{ result }` to replace the tool's result. Throwing leaves the tool's own result in place. */
  afterTool?(ctx: AfterToolContext): { result: unknown } | void | Promise<{ result: unknown } | void>;
}

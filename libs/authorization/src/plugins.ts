// Before/after-tool callbacks. A plugin may allow, skip (its content goes to the model), deny the call, ask people
// about it (even an auto-tier call) or abort the run.
import type { Tier } from '@countersign/contracts';
import type { CallerContext } from './tool';

export interface BeforeToolContext extends CallerContext {
  callId: string;
  toolName: string;
  /** Arguments after the tool's schema parsed them. */
  args: unknown;
  tier: Tier;
}

/** Who a callback asks to decide a call it sends to people: groups (instead of the routing rule's) and a quorum. */
export interface ConfirmationRoute {
  /** The plugin that asked (or `policy <id>` for a call policy). */
  by: string;
  groups?: string[];
  quorum?: number;
  /** Set when a call policy (not a plugin) sent the call to people: the policy that decided. */
  policy?: { id: string; condition: string };
}

export type BeforeToolVerdict =
  | { action: 'allow' }
  | { action: 'skip'; content: string }
  | { action: 'deny'; reason: string }
  | { action: 'confirm'; groups?: string[]; quorum?: number }
  | { action: 'abort'; reason: string };

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

// A tool as the policy engine knows it: name, description, argument schema, tier and handler.
import type { z } from 'zod';
import type { Tier } from '@countersign/contracts';
import type { Precondition } from './precondition';

/** What a handler or callback may know about the call it is part of. */
export interface CallerContext {
  runId: string;
  agent: string;
  userId: string;
  /** Scopes granted to the caller (e.g. `admin`); visible to callbacks. */
  scopes: readonly string[];
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  args: S;
  /** @defaultValue `'auto'` */
  tier?: Tier;
  /**
   * The arguments' JSON schema as the tool's source declares it (e.g. an MCP server's `inputSchema`). When set, it is
   * what the model sees and what the definition hash covers, instead of the schema generated from `args`; `args`
   * must then check that same schema (see the tool providers' JSON-schema validator).
   * @defaultValue generated from `args`
   */
  inputSchema?: Record<string, unknown>;
  /**
   * What the tool's source advertised besides its name and schema (e.g. an MCP tool's own name and description).
   * Covered by the definition hash, so a source that changes it while a call waits gets the call asked about again.
   * @defaultValue nothing beyond name, tier and schema
   */
  advertised?: Record<string, unknown>;
  handler: (args: z.output<S>, ctx: CallerContext & { callId: string }) => unknown | Promise<unknown>;
  /**
   * Optional, read-only: what the call would change, in a few words for approvers (`payments: 3 → 6 replicas`).
   * Computed when a call waits for a person, under a deadline; throwing, timing out or answering nothing shows no
   * preview and never holds the request up (see previewCall). It must not change anything: approvers may deny.
   */
  preview?: (
    args: z.output<S>,
    ctx: CallerContext & { callId: string },
  ) => string | undefined | Promise<string | undefined>;
  /**
   * Optional, read-only: the state of the world the call depends on, as a small JSON value (`{"replicas": 6}`).
   * Evaluated when the call waits for a person (approvers see it, the decision signs its digest) and again right
   * before the approved call runs: a different value means the call does not run and is asked about again. Fails
   * closed (see evaluatePrecondition): a check that throws or times out means the call does not run.
   */
  precondition?: Precondition<z.output<S>>;
}

/** A call the model asked for. `args` is untrusted until the tool's schema has parsed it. */
export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

/** Helper that keeps the handler's argument type tied to the schema. */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> {
  return tool;
}

// What approvers are shown about a tool (its description, tier and argument schema), stored once per tool definition
// in Redis by the agent worker and read by the approval service: a parked request carries only the definition's hash,
// never the description or the schema, so 100,000 parked calls of one tool hold one copy.
import { z } from 'zod';
import { TierSchema, ToolNameSchema } from './common.schema';

/** One hash of every definition: field = definition hash (content-addressed, so an entry never changes). */
export function toolCatalogKey(keyPrefix: string): string {
  return `{${keyPrefix}:tools}:definitions`;
}

export const ToolCatalogEntrySchema = z.object({
  name: ToolNameSchema,
  description: z.string().max(2_000),
  tier: TierSchema,
  /** JSON schema of the arguments as the model writes them (the inbox builds its edit form from it). */
  argsSchema: z.record(z.string(), z.unknown()),
});
export type ToolCatalogEntry = z.infer<typeof ToolCatalogEntrySchema>;

/**
 * What became of a decided call, written by the agent worker when it settles the call and read by the approval
 * service's history: what ran (the arguments, edited or not) and its result, shortened. Kept as long as decided
 * requests stay readable.
 */
export function decidedCallResultKey(keyPrefix: string, requestId: string): string {
  // One hash tag for all of them, so one MGET reads a page of history (Redis Cluster: one slot).
  return `{${keyPrefix}:results}:${requestId}`;
}

export const DECIDED_CALL_RESULT_CHARS = 300;

export const DecidedCallResultSchema = z.object({
  /** The pipeline's outcome: executed, denied, error, ... */
  outcome: z.string().max(40),
  /** What the model was told, shortened. */
  content: z.string().max(DECIDED_CALL_RESULT_CHARS),
  /** The arguments it ran with, when an approver edited them. */
  editedArgs: z.record(z.string(), z.unknown()).optional(),
  at: z.iso.datetime(),
});
export type DecidedCallResult = z.infer<typeof DecidedCallResultSchema>;

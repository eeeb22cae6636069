// `approval-decisions`: signed decisions from the approval service, and the HTTP body an approver posts.
import { z } from 'zod';
import { IdSchema, IsoDateSchema, Sha256HexSchema, ToolArgsSchema, ToolNameSchema } from './common.schema';

export const DecisionValueSchema = z.enum(['approve', 'deny']);
export type DecisionValue = z.infer<typeof DecisionValueSchema>;

/** Who settled it, so the model is told the right story. */
export const DecidedBySchema = z.enum([
  'person', // one or more approvers decided
  'expired', // nobody decided in time: deny
  'policy', // a rule or policy decided
  'no_route', // no approver route: deny
]);
export type DecidedBy = z.infer<typeof DecidedBySchema>;

export const DecisionSchema = z.object({
  /** The request this decides (ApprovalRequest.requestId): a decision never applies to another request of the call. */
  requestId: IdSchema,
  callId: IdSchema,
  runId: IdSchema,
  decision: DecisionValueSchema,
  decidedBy: DecidedBySchema,
  reason: z.string().max(2_000).optional(),
  approvers: z.array(IdSchema).max(32),
  /** Fingerprint of the tool name and arguments the approvers were shown. */
  fingerprint: Sha256HexSchema,
  /** What the approvers were shown; lets the worker print both readable forms on a mismatch. */
  shown: z.object({ toolName: ToolNameSchema, args: ToolArgsSchema }),
  /** Which request attempt of the call this answers. */
  attempt: z.number().int().min(0).max(100).default(0),
  decidedAt: IsoDateSchema,
});
export type Decision = z.infer<typeof DecisionSchema>;

/** HMAC-SHA256 (hex) over the canonical JSON of every other field. */
export const SignedDecisionSchema = DecisionSchema.extend({
  signature: z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex HMAC-SHA256'),
});
export type SignedDecision = z.infer<typeof SignedDecisionSchema>;

/** `POST /approvals/:id/decisions` (a request ID, or a call ID that names one request). */
export const DecisionBodySchema = z
  .object({
    decision: DecisionValueSchema,
    reason: z.string().max(2_000).optional(),
  })
  .strict();
export type DecisionBody = z.infer<typeof DecisionBodySchema>;

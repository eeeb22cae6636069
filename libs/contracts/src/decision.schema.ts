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
  // Added for approvers (issue 16), optional so every decision signed before still verifies the same.
  /**
   * Approve only: the arguments to run instead of the parked call's, because an approver edited them before approving
   * (the approvers approved these). `fingerprint` and `shown` still name the parked call. The worker checks these
   * against the tool's schema and policy itself and runs exactly them, once, or nothing.
   */
  args: ToolArgsSchema.optional(),
  /** Set when a standing rule decided (decidedBy "policy"): the rule's ID, for the audit. */
  rule: IdSchema.optional(),
  // Added for preconditions (issue 29), optional so every decision signed before still verifies the same.
  /**
   * The digest of the precondition value the approvers were shown (ApprovalRequest.precondition.digest), when the tool
   * declares one: signed with the rest, so the approval holds only for that state of the world.
   */
  precondition: Sha256HexSchema.optional(),
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
    /**
     * Approve only: the arguments as you edited them. They must satisfy the tool's argument schema; they become a new
     * revision of the request, and under a quorum the other approvers are asked about them.
     */
    args: ToolArgsSchema.optional(),
    /** The fingerprint of the call you were shown: refused (409) when the arguments were edited since. */
    fingerprint: Sha256HexSchema.optional(),
  })
  .strict()
  .refine((body) => body.args === undefined || body.decision === 'approve', {
    message: 'edited arguments come only with decision "approve"',
    path: ['args'],
  });
export type DecisionBody = z.infer<typeof DecisionBodySchema>;

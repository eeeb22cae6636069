// `approval-decisions`: signed decisions from the approval service, and the HTTP body an approver posts.
import { z } from 'zod';
import { IdSchema, IsoDateSchema, Sha256HexSchema, ToolArgsSchema, ToolNameSchema } from './common.schema';

/**
 * approve (possibly with edited arguments), deny, or respond: the approver answers with text instead of a verdict; the
 * call does not run and the model gets the text as the call's result, so it re-plans.
 */
export const DecisionValueSchema = z.enum(['approve', 'deny', 'respond']);
export type DecisionValue = z.infer<typeof DecisionValueSchema>;

/** The longest text an approver may respond with. */
export const RESPONSE_MAX_CHARS = 4_000;

/** An approver's response (decision "respond"): what the model is given as the call's result. */
export const ResponseTextSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty: say what the agent should do instead')
  .max(RESPONSE_MAX_CHARS, `must be at most ${RESPONSE_MAX_CHARS} characters`);

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
  // Added for respond (issue 29), optional so every decision signed before still verifies the same.
  /** Respond only: the approver's text, given to the model as the call's result. Covered by the signature. */
  response: ResponseTextSchema.optional(),
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
    /**
     * Respond only (required with it): your answer instead of a verdict, 1 to 4,000 characters. The call does not
     * run; the agent's model gets this text as the call's result, naming you, and re-plans.
     */
    response: ResponseTextSchema.optional(),
  })
  .strict()
  .refine((body) => body.args === undefined || body.decision === 'approve', {
    message: 'edited arguments come only with decision "approve"',
    path: ['args'],
  })
  .refine((body) => body.decision !== 'respond' || body.response !== undefined, {
    message: 'decision "respond" needs a response: the text the agent is given instead of running the call',
    path: ['response'],
  })
  .refine((body) => body.response === undefined || body.decision === 'respond', {
    message: 'a response comes only with decision "respond"',
    path: ['response'],
  });
export type DecisionBody = z.infer<typeof DecisionBodySchema>;

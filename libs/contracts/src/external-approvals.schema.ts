// The approvals API for agents Countersign does not run (`/external-approvals`): a machine client submits a tool call,
// waits for the decision, claims the approved call once, runs it itself and reports how it went. The SDK
// (@countersign/sdk) validates every answer with these schemas, so client and service share one definition.
import { z } from 'zod';
import { DecidedBySchema } from './decision.schema';
import { IdSchema, IsoDateSchema, Sha256HexSchema, ToolArgsSchema, ToolNameSchema } from './common.schema';

/** Approval IDs are made by the service: `xa-` and 32 hex digits, unique whoever submits. */
export const ExternalApprovalIdSchema = z
  .string()
  .regex(/^xa-[0-9a-f]{32}$/, 'must be an approval ID the service gave out (xa-<32 hex>)');

/** What a submitted call is for, shown to approvers beside the tool and its arguments. */
export const ExternalCallContextSchema = z
  .object({
    /** What the agent run is doing, in a sentence ("refund order 1234 for a customer"). */
    runDescription: z.string().max(2_000).optional(),
    /** What the tool does, as the agent framework describes it. */
    toolDescription: z.string().max(2_000).optional(),
  })
  .strict();

/**
 * Where an external approval came from, kept with the stored request: the submitting client, and the run and call
 * IDs it chose (the request's own `callId` is the approval ID, since clients' call IDs may collide).
 */
export const ExternalOriginSchema = z
  .object({
    /** The machine principal that submitted it: only it may read, claim and complete it. */
    principal: IdSchema,
    /** The client's own call ID (unique within its run, as far as Countersign knows). */
    callId: IdSchema,
    runDescription: z.string().max(2_000).optional(),
    /** Told of the decision by a signed POST, when given. */
    webhookUrl: z.url().max(2_000).optional(),
  })
  .strict();
export type ExternalOrigin = z.infer<typeof ExternalOriginSchema>;

/**
 * The person a client acts for (it needs an `actAs` entry naming them); left out, the client acts for itself. The
 * requester is part of a call's identity: every route of an approval names the same one as its submission did.
 */
export const OnBehalfOfSchema = IdSchema.optional();

/** `POST /external-approvals`: a tool call that waits for a decision. */
export const ExternalSubmissionSchema = z
  .object({
    /** The client's run (conversation, job) the call belongs to. */
    runId: IdSchema,
    /**
     * The client's call ID; submitting the same run, call ID and arguments for the same person again returns the same
     * approval.
     */
    callId: IdSchema,
    toolName: ToolNameSchema,
    args: ToolArgsSchema,
    onBehalfOf: OnBehalfOfSchema,
    context: ExternalCallContextSchema.optional(),
    /** A URL the decision is POSTed to, signed (see the webhook section of the README). */
    webhook: z
      .object({ url: z.url().max(2_000) })
      .strict()
      .optional(),
  })
  .strict();
export type ExternalSubmission = z.infer<typeof ExternalSubmissionSchema>;

/**
 * How far an approved call got: claimed once (the client may run it), then completed with the client's report.
 * Absent while nobody claimed it.
 */
export const ExternalClaimStateSchema = z.object({
  claimedAt: IsoDateSchema,
  completion: z
    .object({
      outcome: z.enum(['ok', 'error']),
      summary: z.string().optional(),
      at: IsoDateSchema,
    })
    .optional(),
});

/**
 * An external approval as its client sees it. `allow`: approved (claim it before running); `deny`: refused by a
 * person, by expiry or for want of an approver route (`decidedBy` says which, `reason` why); `respond`: an approver
 * answered with text instead (`response`): do not run the call, give the text to your model as its result;
 * `pending`: waiting.
 */
export const ExternalApprovalViewSchema = z.object({
  approvalId: ExternalApprovalIdSchema,
  status: z.enum(['pending', 'allow', 'deny', 'respond']),
  decidedBy: DecidedBySchema.optional(),
  reason: z.string().optional(),
  /** Status `respond`: the approver's text (`approvers` names who). */
  response: z.string().optional(),
  approvers: z.array(IdSchema).optional(),
  decidedAt: IsoDateSchema.optional(),
  runId: IdSchema,
  callId: IdSchema,
  toolName: ToolNameSchema,
  /** Whom the call is for: the person the client acts for, or the client itself. */
  requester: IdSchema,
  /** The client that submitted it (the only one that may read, claim and complete it). */
  client: IdSchema,
  /** The fingerprint of the tool name and arguments the approvers are shown (see the README's Decisions). */
  fingerprint: Sha256HexSchema,
  expiresAt: IsoDateSchema,
  /** Where approvers decide it in the web inbox. */
  inboxUrl: z.url(),
  claim: ExternalClaimStateSchema.optional(),
});
export type ExternalApprovalView = z.infer<typeof ExternalApprovalViewSchema>;

/** Longest bounded wait of `GET /external-approvals/:approvalId?waitMs=`. */
export const EXTERNAL_MAX_WAIT_MS = 30_000;

const WAIT_PROBLEM = `must be a whole number of milliseconds from 0 to ${EXTERNAL_MAX_WAIT_MS}`;

/**
 * `GET /external-approvals/:approvalId?waitMs=&onBehalfOf=`: answer at once (0), or when decided, at most this long
 * after; `onBehalfOf` as the submission named it.
 */
export const ExternalWaitQuerySchema = z
  .object({
    onBehalfOf: OnBehalfOfSchema,
    waitMs: z
      .string()
      .regex(/^\d+$/, WAIT_PROBLEM)
      .transform(Number)
      .refine((n) => n <= EXTERNAL_MAX_WAIT_MS, WAIT_PROBLEM)
      .default(0),
  })
  .strict();
export type ExternalWaitQuery = z.infer<typeof ExternalWaitQuerySchema>;

/**
 * `POST /external-approvals/:approvalId/claim`: the fingerprint of the call the client is about to run, and whom it
 * runs it for (as the submission named them).
 */
export const ClaimBodySchema = z
  .object({ fingerprint: Sha256HexSchema, onBehalfOf: OnBehalfOfSchema })
  .strict();
export type ClaimBody = z.infer<typeof ClaimBodySchema>;

/** The claimed call: run exactly this (the arguments as approved). */
export const ClaimResultSchema = z.object({
  approvalId: ExternalApprovalIdSchema,
  toolName: ToolNameSchema,
  args: ToolArgsSchema,
  fingerprint: Sha256HexSchema,
  /** Whom the approved call is for. */
  requester: IdSchema,
  claimedAt: IsoDateSchema,
});
export type ClaimResult = z.infer<typeof ClaimResultSchema>;

/** `POST /external-approvals/:approvalId/completion`: how running the claimed call went. */
export const CompletionBodySchema = z
  .object({
    outcome: z.enum(['ok', 'error']),
    /** A short summary for the audit log (not the tool's whole output). */
    summary: z.string().max(500).optional(),
    onBehalfOf: OnBehalfOfSchema,
  })
  .strict();
export type CompletionBody = z.infer<typeof CompletionBodySchema>;

/** Why the API refused a claim or a completion (the `error` field of a 403/404/409/410 answer). */
export const ExternalRefusalReasonSchema = z.enum([
  'unknown_approval',
  'not_decided',
  'denied',
  'expired',
  'fingerprint_mismatch',
  'already_claimed',
  'not_claimed',
  'already_completed',
]);
export type ExternalRefusalReason = z.infer<typeof ExternalRefusalReasonSchema>;

/** The body of a refusal. */
export const ExternalRefusalSchema = z.object({
  statusCode: z.number().int(),
  error: ExternalRefusalReasonSchema,
  message: z.string(),
});
export type ExternalRefusal = z.infer<typeof ExternalRefusalSchema>;

/** `GET /external-approvals/webhook-secret`: the caller's own webhook signing secret. */
export const WebhookSecretSchema = z.object({ secret: z.string().min(32) });

/** The headers of a webhook POST (lowercase, as Node gives them). */
export const WEBHOOK_HEADERS = {
  timestamp: 'x-countersign-request-timestamp',
  signature: 'x-countersign-signature',
} as const;

/** The body of a webhook POST: the approval as the client would read it, once it is decided. */
export const WebhookPayloadSchema = z.object({
  type: z.literal('approval.decided'),
  approval: ExternalApprovalViewSchema,
});
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

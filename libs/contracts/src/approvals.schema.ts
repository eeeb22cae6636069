// Approval service HTTP views and the audit log.
import { z } from 'zod';
import { ApprovalRequestSchema } from './approval-request.schema';
import { DecidedBySchema, DecisionValueSchema } from './decision.schema';
import { IdSchema, IsoDateSchema } from './common.schema';

export const ApprovalStatusSchema = z.enum(['pending', 'decided', 'expired', 'notice']);
export type ApprovalStatus = z.infer<typeof ApprovalStatusSchema>;

export const ApprovalListQuerySchema = z.object({
  status: z.enum(['pending', 'decided', 'expired']).optional(),
});

export const ApprovalVoteSchema = z.object({
  approver: IdSchema,
  decision: DecisionValueSchema,
  reason: z.string().optional(),
  channel: z.enum(['slack', 'email', 'web', 'api', 'cli']),
  at: IsoDateSchema,
});

export const ApprovalViewSchema = z.object({
  request: ApprovalRequestSchema,
  status: ApprovalStatusSchema,
  groups: z.array(IdSchema),
  quorum: z.number().int().min(1),
  expiresAt: IsoDateSchema,
  votes: z.array(ApprovalVoteSchema),
  outcome: z
    .object({
      decision: DecisionValueSchema,
      decidedBy: DecidedBySchema,
      approvers: z.array(IdSchema),
      reason: z.string().optional(),
      decidedAt: IsoDateSchema,
    })
    .optional(),
  trustSuggestion: z.string().optional(),
});
export type ApprovalView = z.infer<typeof ApprovalViewSchema>;

export const AuditEventType = [
  'request.created',
  'request.notice',
  'request.escalated',
  'notification.sent',
  'notification.failed',
  'decision.recorded',
  'decision.published',
  'decision.rejected',
  'decision.received',
  'decision.ignored',
  'run.parked',
  'run.resumed',
  'tool.executed',
  'tool.denied',
  'tool.interrupted',
] as const;
export const AuditEventTypeSchema = z.enum(AuditEventType);

export const AuditQuerySchema = z.object({
  runId: IdSchema.optional(),
  callId: IdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});

/** One audit entry as read back. Each writer (one process) keeps its own hash chain in the shared stream. */
export const AuditEntrySchema = z.object({
  /** Stream ID; the order of the stream is the order of `GET /audit`. */
  id: z.string(),
  type: AuditEventTypeSchema,
  at: IsoDateSchema,
  service: z.string(),
  runId: IdSchema.optional(),
  callId: IdSchema.optional(),
  actor: z.string().optional(),
  detail: z.record(z.string(), z.unknown()).default({}),
  /** The writer's chain (`<service>:<8 hex>`, new each time a process starts). */
  chain: z.string(),
  /** Hash of the previous entry of the same chain; "" for a chain's first entry. */
  prevHash: z.string(),
  /** SHA-256 of `prevHash`, a newline and the entry's canonical JSON. */
  hash: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** `GET /audit/verify`: whether every writer's chain is intact, and the first place one breaks. */
export const AuditVerificationSchema = z.object({
  intact: z.boolean(),
  entries: z.number().int().min(0),
  chains: z.number().int().min(0),
  brokenAt: z.object({ id: z.string(), reason: z.string() }).optional(),
});
export type AuditVerification = z.infer<typeof AuditVerificationSchema>;

/** `POST /approvals/:callId/decisions` answer: decided now, or a vote counted towards a quorum. */
export const DecisionResultSchema = z.object({
  callId: IdSchema,
  status: z.enum(['decided', 'vote_recorded']),
  /** Set when decided. */
  decision: DecisionValueSchema.optional(),
  approvers: z.array(IdSchema).optional(),
  /** Set while a quorum is being gathered. */
  approvals: z.number().int().min(0).optional(),
  quorum: z.number().int().min(1).optional(),
});
export type DecisionResult = z.infer<typeof DecisionResultSchema>;

/** `POST /approve/:token`: the email confirmation page's form. */
export const EmailDecisionFormSchema = z.object({
  decision: DecisionValueSchema,
  reason: z.string().max(2_000).optional(),
});
export type EmailDecisionForm = z.infer<typeof EmailDecisionFormSchema>;

/** `POST /inbox/session`: the inbox sign-in form. */
export const InboxSignInFormSchema = z.object({ token: z.string().min(1).max(512) });

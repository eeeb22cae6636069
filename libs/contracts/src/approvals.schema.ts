// Approval service HTTP views and the audit log.
import { z } from 'zod';
import { ApprovalRequestSchema } from './approval-request.schema';
import { DecidedBySchema, DecisionValueSchema, ResponseTextSchema } from './decision.schema';
import { IdSchema, IsoDateSchema, TierSchema } from './common.schema';

export const ApprovalStatusSchema = z.enum(['pending', 'decided', 'expired', 'notice']);
export type ApprovalStatus = z.infer<typeof ApprovalStatusSchema>;

/** The lists `GET /approvals` pages through, in this order, when no status is asked for. */
export const APPROVAL_LIST_ORDER = [
  'pending',
  'notice',
  'decided',
  'expired',
] as const satisfies readonly ApprovalStatus[];

/** Page size of `GET /approvals`. */
export const APPROVAL_PAGE_LIMIT = { default: 100, max: 500 } as const;

/**
 * Where a page of `GET /approvals` ended: the list, and the score and request ID of the last entry it read. Each list
 * is a sorted set of request IDs ordered by (score, request ID), so the next page starts strictly after this pair.
 */
export const ApprovalCursorSchema = z.object({
  status: ApprovalStatusSchema,
  /** The score as Redis prints it (ms since the epoch for every list this service writes). */
  score: z.string().regex(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i),
  requestId: IdSchema,
});
export type ApprovalCursor = z.infer<typeof ApprovalCursorSchema>;

/**
 * The cursor as it travels in a URL: opaque to clients. It grants nothing (every entry read with it is still
 * checked against the caller's groups), so it is encoded, not signed.
 */
export function encodeApprovalCursor(cursor: ApprovalCursor): string {
  return Buffer.from(`${cursor.status}:${cursor.score}:${cursor.requestId}`).toString('base64url');
}

const CURSOR_PROBLEM = 'is not a cursor of this list (use the Link header of the previous page)';

const CursorParamSchema = z
  .string()
  .max(400, CURSOR_PROBLEM)
  .transform((text, ctx) => {
    // Node's base64url decoder skips characters it does not know, so check the alphabet first.
    const decoded = /^[A-Za-z0-9_-]+$/.test(text) ? Buffer.from(text, 'base64url').toString() : '';
    const [status, score, requestId, ...rest] = decoded.split(':'); // IDs never contain ':'
    const cursor = ApprovalCursorSchema.safeParse({ status, score, requestId });
    if (rest.length === 0 && cursor.success) return cursor.data;
    ctx.addIssue({ code: 'custom', message: CURSOR_PROBLEM });
    return z.NEVER;
  });

const LIMIT_PROBLEM = `must be a whole number from 1 to ${APPROVAL_PAGE_LIMIT.max}`;

/** `GET /approvals?status&limit&cursor`. Query values arrive as strings; `limit` accepts digits only. */
export const ApprovalListQuerySchema = z
  .object({
    status: z.enum(['pending', 'decided', 'expired']).optional(),
    limit: z
      .string()
      .regex(/^\d+$/, LIMIT_PROBLEM)
      .transform(Number)
      .refine((n) => n >= 1 && n <= APPROVAL_PAGE_LIMIT.max, LIMIT_PROBLEM)
      .default(APPROVAL_PAGE_LIMIT.default),
    cursor: CursorParamSchema.optional(),
  })
  .superRefine((query, ctx) => {
    // A cursor of another list (e.g. from a walk without `status`) would silently skip entries.
    const { status, cursor } = query;
    if (typeof cursor === 'object' && status !== undefined && cursor.status !== status)
      ctx.addIssue({ code: 'custom', path: ['cursor'], message: CURSOR_PROBLEM });
  });
export type ApprovalListQuery = z.infer<typeof ApprovalListQuerySchema>;

export const ApprovalVoteSchema = z.object({
  approver: IdSchema,
  decision: DecisionValueSchema,
  reason: z.string().optional(),
  /** Decision "respond": the approver's text. */
  response: z.string().optional(),
  channel: z.enum(['slack', 'email', 'web', 'api', 'cli']),
  at: IsoDateSchema,
  /** The revision of the arguments voted on (0: as the agent asked; each edit adds one). */
  rev: z.number().int().min(0).default(0),
  /** This vote edited the arguments. */
  edited: z.boolean().optional(),
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
      /** Approved with edited arguments: what runs. */
      args: z.record(z.string(), z.unknown()).optional(),
      /** Decided by this standing rule. */
      rule: IdSchema.optional(),
      /** Decision "respond": the approver's text, given to the model as the call's result (nothing ran). */
      response: z.string().optional(),
    })
    .optional(),
  /**
   * The arguments as an approver last edited them: what is shown, and what runs if approved (`request.args` stays what
   * the agent asked). Votes cast before the edit are in `setAside`: they do not count.
   */
  edited: z
    .object({
      args: z.record(z.string(), z.unknown()),
      fingerprint: z.string(),
      by: IdSchema,
      at: IsoDateSchema,
      rev: z.number().int().min(1),
    })
    .optional(),
  setAside: z.array(ApprovalVoteSchema).optional(),
  /** A manual-step notice a person marked done. */
  done: z.object({ by: IdSchema, at: IsoDateSchema, note: z.string().optional() }).optional(),
  trustSuggestion: z.string().optional(),
  /** The routing rule that sent the request to its groups, and why it matched. */
  route: z.object({ rule: z.string(), why: z.string() }).optional(),
  /** What the tool does (from the tool catalog); absent when the worker never described it. */
  tool: z
    .object({
      description: z.string(),
      tier: TierSchema,
      /** JSON schema of the arguments: what an edit before approving must satisfy. */
      argsSchema: z.record(z.string(), z.unknown()),
    })
    .optional(),
});
export type ApprovalView = z.infer<typeof ApprovalViewSchema>;

export const AuditEventType = [
  'request.created',
  'request.resubmitted', // a submission of the approvals API found the approval of the same call (not a new request)
  'request.notice',
  'request.escalated',
  'request.rerouted', // an edit made a revision whose route has other groups or another quorum (both routes kept)
  'notification.sent',
  'notification.failed',
  'decision.recorded',
  'decision.published',
  'decision.rejected',
  'decision.received',
  'decision.ignored',
  'run.started',
  'run.parked',
  'run.resumed',
  'tool.started',
  'tool.executed',
  'tool.failed',
  'tool.denied',
  'tool.responded', // an approver responded with text instead of a verdict: the call did not run, the model got the text
  'tool.interrupted',
  'tool.precondition_changed', // an approved call's precondition changed before it ran: not run, asked again (old, new)
  'tool.precondition_failed', // an approved call's precondition could not be checked before it ran: not run
  'tool.claimed', // an approved external call was claimed by its client, which may now run it
  'tool.claim_refused', // a claim or completion report the approvals API refused (why: detail.reason)
  'rule.created',
  'rule.revoked',
  'manual_step.done',
  'manual_step.noted',
  'admission.answered', // an admission hook's answer about a call (detail: hook, stage, answer, ms)
  'admission.failed', // an admission hook that did not answer usably (timeout, non-2xx, bad body, unreachable)
] as const;
export const AuditEventTypeSchema = z.enum(AuditEventType);

/** Where a page of `GET /audit` ended: the stream ID of the oldest entry it looked at; the next page reads older ones. */
export const AuditCursorSchema = z
  .string()
  .regex(/^\d{1,20}-\d{1,20}$/, 'is not a cursor of GET /audit (use the Link header of the previous page)');

export const AuditQuerySchema = z.object({
  runId: IdSchema.optional(),
  callId: IdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
  cursor: AuditCursorSchema.optional(),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

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
  /** The writer's chain (`<service>:<8 hex>:<key ID>`, new when a process starts or after an hour without appends). */
  chain: z.string(),
  /**
   * Hash of the previous entry of the same chain; "" for a chain's first entry. Absent when that entry lies beyond
   * what the request read (GET /audit reads a bounded part of the stream).
   */
  prevHash: z.string().optional(),
  /** HMAC-SHA256, under the audit signing key, of the chain ID, `prevHash` and the entry's canonical JSON. */
  hash: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** `GET /audit/verify`: whether every writer's chain is intact, and the first place one breaks. */
export const AuditVerificationSchema = z.object({
  intact: z.boolean(),
  /** Entries walked (those retention trimmed are not among them). */
  entries: z.number().int().min(0),
  chains: z.number().int().min(0),
  /** IDs of the signing keys the log's chains and checkpoint need (a previous secret can go once its ID is not here). */
  keys: z.array(z.string()),
  /** What retention trimmed: everything up to the stream ID `upTo`, `trimmed` entries in all. */
  checkpoint: z.object({ upTo: z.string(), at: z.string(), trimmed: z.number().int().min(0) }).optional(),
  /** The first break: a stream ID, or "-" when it is no entry (a head, a chain, the checkpoint). */
  brokenAt: z.object({ id: z.string(), reason: z.string() }).optional(),
});
export type AuditVerification = z.infer<typeof AuditVerificationSchema>;

/**
 * `POST /approvals/:id/decisions` answer: decided now, a vote counted towards a quorum, or (`rerouted`) an edit that
 * routed the request anew to groups the approver is not in: the edit stands as the revision they are asked about, and
 * the approver's own vote did not count.
 */
export const DecisionResultSchema = z.object({
  callId: IdSchema,
  /** The request the vote was counted on (the path may have named it by its call ID). */
  requestId: IdSchema,
  status: z.enum(['decided', 'vote_recorded', 'rerouted']),
  /** Set when decided. */
  decision: DecisionValueSchema.optional(),
  approvers: z.array(IdSchema).optional(),
  /** Set while a quorum is being gathered. */
  approvals: z.number().int().min(0).optional(),
  quorum: z.number().int().min(1).optional(),
  /**
   * Set when this vote's edit routed the request anew (the revision's groups or quorum differ): the route the revision
   * has now, and who decides it.
   */
  route: z
    .object({ rule: z.string(), why: z.string(), groups: z.array(IdSchema), quorum: z.number().int().min(1) })
    .optional(),
  /** What happens next, in words for the approver ("The agent runs scale_service now …"). */
  next: z.string().optional(),
});
export type DecisionResult = z.infer<typeof DecisionResultSchema>;

/**
 * `POST /approve/:token`: the email confirmation page's form. It posts every field; `response` counts only with
 * decision "respond", which requires it.
 */
export const EmailDecisionFormSchema = z
  .object({
    decision: DecisionValueSchema,
    reason: z.string().max(2_000).optional(),
    response: z.string().optional(),
  })
  .transform((form, ctx) => {
    const { decision, reason } = form;
    if (decision !== 'respond') return { decision, reason };
    const response = ResponseTextSchema.safeParse(form.response ?? '');
    if (response.success) return { decision, reason, response: response.data };
    for (const issue of response.error.issues)
      ctx.addIssue({ code: 'custom', path: ['response'], message: issue.message });
    return z.NEVER;
  });
export type EmailDecisionForm = z.infer<typeof EmailDecisionFormSchema>;

/**
 * `POST /inbox/session`: the inbox sign-in form, with a token typed in or the code of a one-time sign-in link, and the
 * CSRF token the sign-in page put in a hidden field (it must equal the page's CSRF cookie).
 */
export const InboxSignInFormSchema = z
  .object({
    token: z.string().min(1).max(4096).optional(),
    code: z.string().min(1).max(100).optional(),
    csrf: z.string().min(1).max(100),
  })
  .refine((form) => (form.token === undefined) !== (form.code === undefined), {
    message: 'send either token or code',
    path: ['token'],
  });
export type InboxSignInForm = z.infer<typeof InboxSignInFormSchema>;

/** `POST /inbox/sign-in-links`: a one-time link that signs the caller in to the inbox in a browser. */
export const SignInLinkSchema = z.object({ url: z.url(), expiresAt: IsoDateSchema });
export type SignInLink = z.infer<typeof SignInLinkSchema>;

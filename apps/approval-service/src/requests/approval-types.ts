// The approval domain: one request as the service keeps it (its route, votes, revisions, outcome), and what is stored
// when a request comes in. Read from Redis by request-codec.ts; every feature works on these.
import type {
  ApprovalCursor,
  ApprovalRequest,
  ApprovalStatus,
  DecidedBy,
  DecisionValue,
  ToolCatalogEntry,
} from '@countersign/contracts';
import { z } from 'zod';

export const VoteSchema = z.object({
  approver: z.string(),
  decision: z.enum(['approve', 'deny', 'respond']),
  reason: z.string().optional(),
  /** Decision "respond": the approver's text. */
  response: z.string().optional(),
  channel: z.enum(['slack', 'email', 'web', 'api', 'cli']),
  at: z.string(),
  /** The revision of the arguments the vote was cast on (0: as the agent asked). */
  rev: z.number().int().min(0).default(0),
  /** This vote edited the arguments (and so started their revision). */
  edited: z.boolean().optional(),
});
export type Vote = z.infer<typeof VoteSchema>;
export type VoteChannel = Vote['channel'];

export interface Outcome {
  decision: DecisionValue;
  decidedBy: DecidedBy;
  approvers: string[];
  reason?: string;
  decidedAt: string;
  /** Approved with arguments an approver edited: the worker runs these (after its own checks). */
  args?: Record<string, unknown>;
  /** Decided by this standing rule (decidedBy "policy"). */
  rule?: string;
  /** Decision "respond": the approver's text, which the model gets as the call's result instead of running it. */
  response?: string;
}

/** An approver's edit of the arguments: the request shows these now, under a new revision. */
export interface Edit {
  args: Record<string, unknown>;
  fingerprint: string;
  by: string;
  at: string;
  rev: number;
}

/** The routing rule that sent a request (or its current revision) to its groups, and why it matched. */
export interface RouteName {
  rule: string;
  why: string;
}

/** Everything stored about one request. */
export interface StoredApproval {
  request: ApprovalRequest;
  status: ApprovalStatus;
  /** The groups of the current revision's route; the escalation groups are among them once it escalated. */
  groups: string[];
  quorum: number;
  /** Who is added when the request escalates (the current revision's route's escalation). */
  escalationGroups: string[];
  /** Counts every change of the route (a revision routed anew, an escalation): a vote checked before one is refused. */
  routeVersion: number;
  channels: string[];
  createdAt: number;
  expiresAt: number;
  votes: Vote[];
  /** Votes on arguments that were edited since: they do not count. */
  setAside: Vote[];
  /** The latest edit, when an approver edited the arguments. */
  edited?: Edit;
  trustCount: number;
  outcome?: Outcome;
  published: boolean;
  slackMessages: { channel: string; ts: string }[];
  /** Approvers the request was emailed to: an expiry is emailed to them, and only them. */
  emailed: string[];
  /** The routing rule that sent its current revision to its groups, and why it matched. */
  route?: RouteName;
  /** What the tool does, from the tool catalog; filled in when read for showing (see ApprovalReadModel.describe). */
  tool?: ToolCatalogEntry;
  /** A notice a person marked done. */
  done?: { by: string; at: string; note?: string };
}

export interface NewApproval {
  request: ApprovalRequest;
  /** The routing rule that matched, and why (shown to approvers). */
  route?: RouteName;
  status: 'pending' | 'notice' | 'decided';
  groups: string[];
  quorum: number;
  channels: string[];
  now: number;
  expiresAt: number;
  /** Only for status "pending": when to add which groups (scheduled with the request). */
  escalation?: { at: number; groups: string[] };
  /** Only for status "decided": refused at once (no route). */
  refusal?: { decidedBy: DecidedBy; reason: string; at: string };
}

/** The route a revision of edited arguments gets (from routeRequest), as the store writes it. */
export interface RevisionRoute extends RouteName {
  groups: string[];
  quorum: number;
  escalation?: { at: number; groups: string[] };
}

export interface ListOptions {
  /**
   * The lists to read, walked one after the other, each in score order (pending and notices: created; decided
   * and expired: settled).
   * @defaultValue all of them, in APPROVAL_LIST_ORDER
   */
  statuses?: readonly ApprovalStatus[];
  /** The most entries to read (≥ 1); a page holds fewer when hashes aged out. */
  limit: number;
  /** Read strictly after this entry: the `next` of the previous page. */
  after?: ApprovalCursor;
}

export interface ApprovalPage {
  approvals: StoredApproval[];
  /** Where the next page starts; undefined when nothing followed this page when it was read. */
  next?: ApprovalCursor;
}

/** The IDs every log line and follow-up about a request carries. */
export function idsOf(approval: Pick<StoredApproval, 'request'>): {
  callId: string;
  runId: string;
  requestId: string;
} {
  const { callId, runId, requestId } = approval.request;
  return { callId, runId, requestId };
}

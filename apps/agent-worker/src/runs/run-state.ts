// The shapes of a run as the worker works with it; how they are stored in Redis is run-state-codec.ts's (and
// run-keys.ts's) alone.
import type {
  ApprovalRequestReason,
  ChatMessage,
  DecidedBy,
  DecisionValue,
  RunStatus,
  ScriptTurn,
  Tier,
} from '@countersign/contracts';
import type { ConfirmationRoute, PreconditionValue } from '@countersign/authorization';
import type { CallState } from '@countersign/call-ledger';

/** A call of the frontier as parked. Rewritten only when the call is asked about again. */
export interface ParkedCallBody {
  id: string;
  name: string;
  /** Arguments as the tool's schema parsed them: exactly what approvers see and what runs. */
  args: Record<string, unknown>;
  tier: Tier;
  /** What approvers decide on (tool name and arguments, see `fingerprint` in libs/authorization); '' for auto calls. */
  fingerprint: string;
  /** The tool's definition when the call was parked: a different one at resume means it is asked about again. */
  definitionHash: string;
  attempt: number;
  reason: ApprovalRequestReason;
  /**
   * The request this call waits for (ApprovalRequest.requestId): new when the call is parked and each time it is
   * asked again; only a decision that names it applies. Absent on calls that never waited (settled in their turn).
   */
  requestId?: string;
  /** Position in the assistant message, so results go back to the model in order. */
  position: number;
  /** Set when an admission hook sent the call to people: the hook, and the groups and quorum it named. */
  route?: ConfirmationRoute;
  /** The tool's precondition as evaluated when the call was asked about (see RequestPrecondition). */
  precondition?: PreconditionValue & { previous?: unknown };
}

export interface StoredDecision {
  decision: DecisionValue;
  decidedBy: DecidedBy;
  reason?: string;
  approvers: string[];
  fingerprint: string;
  decidedAt: string;
  /** Approved with arguments an approver edited: run these (after the worker's own checks), not the parked ones. */
  args?: Record<string, unknown>;
  /** The standing rule that decided. */
  rule?: string;
  /** Decision "respond": the approver's text (signed), given to the model as the call's result; nothing runs. */
  response?: string;
  /** The digest of the precondition value the approvers were shown (signed with the decision). */
  precondition?: string;
}

/** What the model is told about a settled call. */
export interface CallResult {
  outcome: string;
  content: string;
}

export interface FrontierCall {
  body: ParkedCallBody;
  state: CallState;
  decision?: StoredDecision;
  result?: CallResult;
}

/** A person did a manual step of this run: what the model is told at its next turn (see withNotes in run-loop.ts). */
export interface ManualNote {
  /** The notice's request: one note per request (a later turn may reuse the call ID for another manual step). */
  requestId: string;
  callId: string;
  text: string;
}

export interface RunRecord {
  runId: string;
  agent: string;
  userId: string;
  /** The machine client that started the run for `userId`, when one did. */
  submittedBy?: string;
  sessionId?: string;
  scopes: string[];
  status: RunStatus;
  messages: ChatMessage[];
  /** A scripted run's turns; those already played are null once the run was parked (see RunStore.parkRun). */
  script?: (ScriptTurn | null)[];
  result?: string;
  error?: string;
  /** In call order. */
  frontier: FrontierCall[];
  /** Manual steps people did, as noted so far (each told to the model once). */
  notes?: ManualNote[];
}

/** "<jobId>|<lock token>|<started>": who may advance the run right now. */
export interface Lease {
  jobId: string;
  token: string;
  /**
   * The job's attemptsStarted as this processing began: BullMQ counts it up each time the job becomes active, so
   * a later processing of the same job has a higher one. A redelivery takes the run over from an earlier
   * processing, never the other way round (one whose lock lapsed before it reached Redis comes late).
   */
  started: number;
}

// `approval-requests`: one message per call that waits for a person (or a manual-step notice).
import { z } from 'zod';
import {
  IdSchema,
  IsoDateSchema,
  Sha256HexSchema,
  TierSchema,
  ToolArgsSchema,
  ToolNameSchema,
} from './common.schema';
import { ExternalOriginSchema } from './external-approvals.schema';

export const ApprovalRequestReasonSchema = z.enum([
  'confirmation_required',
  'manual_step', // manual_only: nothing to approve, a person must act
  'interrupted', // a worker died while running the approved call; asked again
  'definition_changed', // the tool changed between parking and resuming; asked again
  'edit_not_applied', // an approver's edited arguments did not survive the worker's own checks; asked again
  'precondition_changed', // the tool's precondition changed between the approval and the call's execution; asked again
]);
export type ApprovalRequestReason = z.infer<typeof ApprovalRequestReasonSchema>;

/**
 * Bounds of what a request carries besides the call (characters): it waits in Redis with every parked request, so each
 * part is short. The tool's description and argument schema are not here: they are stored once per tool definition
 * (see tool-catalog.ts).
 */
export const REQUEST_CONTEXT_LIMITS = { input: 160, modelText: 280, preview: 160, step: 200 } as const;

/** What the run is for and what the call will change, as approvers are shown it. Every part is optional. */
export const RequestContextSchema = z
  .object({
    /** The run's input (what the person asked the agent for), shortened. */
    input: z.string().max(REQUEST_CONTEXT_LIMITS.input).optional(),
    /** The text the model wrote before it asked for the call, when it wrote one, shortened. */
    modelText: z.string().max(REQUEST_CONTEXT_LIMITS.modelText).optional(),
    /** The tool's own read-only preview of the effect, e.g. `payments: 3 → 6 replicas`. */
    preview: z.string().max(REQUEST_CONTEXT_LIMITS.preview).optional(),
    /** Runbook runs: which runbook and step the call comes from, e.g. `step 3 of 7 of payments-failover`. */
    step: z.string().max(REQUEST_CONTEXT_LIMITS.step).optional(),
  })
  .strict();
export type RequestContext = z.infer<typeof RequestContextSchema>;

/** `text` on one line, at most `max` characters (an ellipsis marks a cut); undefined when nothing is left. */
export function excerpt(text: string | null | undefined, max: number): string | undefined {
  const line = (text ?? '').replace(/\s+/g, ' ').trim();
  if (line.length === 0) return undefined;
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** The longest a precondition's value may be as JSON (characters); the worker refuses longer ones (fail closed). */
export const MAX_PRECONDITION_JSON_CHARS = 1_000;

const PreconditionJsonSchema = z
  .json()
  .refine((value) => JSON.stringify(value).length <= MAX_PRECONDITION_JSON_CHARS, {
    message: `must be at most ${MAX_PRECONDITION_JSON_CHARS} characters as JSON`,
  });

/**
 * The tool's precondition as evaluated when the call was asked about: the state of the world the approval is for
 * (e.g. `{"replicas": 6}`). Approvers see it; the decision signs `digest`, and the worker runs the approved call only
 * if the precondition still has that value right before it runs.
 */
export const RequestPreconditionSchema = z
  .object({
    value: PreconditionJsonSchema,
    /** Lowercase hex `sha256(canonicalJSON(value))` (see preconditionDigest in libs/authorization). */
    digest: Sha256HexSchema,
    /** On a re-ask because it changed (`precondition_changed`): the value the earlier approval was for. */
    previous: PreconditionJsonSchema.optional(),
  })
  .strict();
export type RequestPrecondition = z.infer<typeof RequestPreconditionSchema>;

/**
 * The precondition as every channel shows it: its value as compact JSON, and on a re-ask what the earlier approval was
 * for: `{"replicas":9} (changed since the earlier approval, which was for {"replicas":6})`.
 */
export function preconditionInWords(precondition: RequestPrecondition): string {
  const now = JSON.stringify(precondition.value);
  if (precondition.previous === undefined) return now;
  return `${now} (changed since the earlier approval, which was for ${JSON.stringify(precondition.previous)})`;
}

export const ApprovalRequestSchema = z.object({
  /**
   * This request's own identity: new each time a call is parked or asked again, so two runs that use one call ID,
   * or a later turn that reuses one, never share a request. The signed decision carries it back, and a worker applies
   * a decision only to the parked call that waits for this request ID. The approval service keys its state by it.
   */
  requestId: IdSchema,
  /** The model's ID of the call (chosen by the model or the script; unique only within one turn). */
  callId: IdSchema,
  runId: IdSchema,
  agent: IdSchema,
  requester: IdSchema,
  /** The machine client that started the run for the requester, when one did (it may not decide either). */
  submittedBy: IdSchema.optional(),
  toolName: ToolNameSchema,
  toolDescription: z.string().max(2_000).default(''),
  args: ToolArgsSchema,
  /** A request is about a confirm-tier call unless it is a manual-step notice (manual_only). */
  tier: TierSchema.default('confirm'),
  fingerprint: Sha256HexSchema,
  /** Hash of the tool's name, argument schema and tier when the call was parked. */
  toolDefinitionHash: Sha256HexSchema,
  reason: ApprovalRequestReasonSchema.default('confirmation_required'),
  /** 0 for the first request of a call, +1 each time it is asked again. */
  attempt: z.number().int().min(0).max(100).default(0),
  /**
   * When the call was parked. The agent worker leaves it out of the queued message (the job's own timestamp is the
   * same instant, and a parked request waits in Redis by the 100,000s); the approval service fills it from there.
   */
  requestedAt: IsoDateSchema,
  /** What the run is for and what the call will change; absent when nothing is known. */
  context: RequestContextSchema.optional(),
  /** Set when the tool declares a precondition: its value when the call was asked about. */
  precondition: RequestPreconditionSchema.optional(),
  /**
   * Set on calls submitted through the approvals API by an agent Countersign does not run. Their `callId` is the
   * approval ID the service made (clients' own call IDs may collide); the client's IDs are kept here. Their
   * decisions go back to the client, never to the worker's approval-decisions queue.
   */
  external: ExternalOriginSchema.optional(),
  /**
   * Set when an admission hook sent the call to people (even an auto-tier one): the hook, and the groups and quorum
   * it named. Routing gives the request to those groups, with at least that quorum.
   */
  admission: z
    .object({
      hook: IdSchema,
      groups: z.array(IdSchema).min(1).max(16).optional(),
      quorum: z.number().int().min(1).max(16).optional(),
    })
    .strict()
    .optional(),
  /**
   * Set when a Cedar policy sent the call to people: the policy and its condition as written (what approvers and the
   * audit are shown), and the groups and quorum its annotations named. Routing gives the request to those groups, with
   * at least that quorum.
   */
  policy: z
    .object({
      id: IdSchema,
      condition: z.string().max(1_000),
      groups: z.array(IdSchema).min(1).max(16).optional(),
      quorum: z.number().int().min(1).max(16).optional(),
    })
    .strict()
    .optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/** A queued request's data as read off the queue: `requestedAt` is the job's timestamp when the message leaves it out. */
export function withRequestedAt(data: unknown, jobTimestamp: number): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  return { requestedAt: new Date(jobTimestamp).toISOString(), ...data };
}

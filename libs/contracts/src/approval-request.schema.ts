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
]);
export type ApprovalRequestReason = z.infer<typeof ApprovalRequestReasonSchema>;

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
  tier: TierSchema,
  fingerprint: Sha256HexSchema,
  /** Hash of the tool's name, argument schema and tier when the call was parked. */
  toolDefinitionHash: Sha256HexSchema,
  reason: ApprovalRequestReasonSchema.default('confirmation_required'),
  /** 0 for the first request of a call, +1 each time it is asked again. */
  attempt: z.number().int().min(0).max(100).default(0),
  requestedAt: IsoDateSchema,
  /**
   * Set on calls submitted through the approvals API by an agent Countersign does not run. Their `callId` is the
   * approval ID the service made (clients' own call IDs may collide); the client's IDs are kept here. Their
   * decisions go back to the client, never to the worker's approval-decisions queue.
   */
  external: ExternalOriginSchema.optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

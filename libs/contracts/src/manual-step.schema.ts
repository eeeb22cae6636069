// `approval-decisions` also carries this: a person marked a manual-step notice done, so the run's model is told a
// person did the step. Signed like a decision (the worker refuses an unsigned or forged one); it approves nothing.
import { z } from 'zod';
import { IdSchema, IsoDateSchema, ToolArgsSchema, ToolNameSchema } from './common.schema';

export const ManualStepDoneSchema = z.object({
  /** The notice's request: the worker keeps one note per request (a later turn may reuse the call ID). */
  requestId: IdSchema,
  callId: IdSchema,
  runId: IdSchema,
  toolName: ToolNameSchema,
  args: ToolArgsSchema,
  /** The approver who says they did it. */
  doneBy: IdSchema,
  note: z.string().max(2_000).optional(),
  doneAt: IsoDateSchema,
});
export type ManualStepDone = z.infer<typeof ManualStepDoneSchema>;

/** HMAC-SHA256 (hex) over the canonical JSON of every other field, with the decision signing secret. */
export const SignedManualStepDoneSchema = ManualStepDoneSchema.extend({
  signature: z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex HMAC-SHA256'),
});
export type SignedManualStepDone = z.infer<typeof SignedManualStepDoneSchema>;

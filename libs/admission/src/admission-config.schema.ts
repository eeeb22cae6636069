// The `admission` section of an agent's (or the gateway's) config: HTTP hooks asked before a tool call runs and after
// it ran, each for the tools its globs match, signed with a secret read from an environment variable.
import { z } from 'zod';
import { IdSchema } from '@countersign/contracts';

/** The longest a hook may take; past its timeout a before-hook refuses the call, an after-hook keeps the result. */
export const MAX_HOOK_TIMEOUT_MS = 5_000;

export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const AdmissionHookSchema = z
  .object({
    name: IdSchema.describe('Names the hook in audit entries, metrics and what the model is told.'),
    tools: z
      .array(z.string().min(1).max(128))
      .min(1)
      .describe(
        'Globs over tool names (`*` any run of characters, `?` one): the calls the hook is asked about.',
      ),
    url: z
      .url({ protocol: /^https?$/ })
      .describe('Where the call is POSTed (JSON, signed; see the guide "Admission hooks").'),
    secretEnv: EnvNameSchema.describe(
      'The environment variable holding the signing secret (never the secret itself); unset or empty stops start-up.',
    ),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_HOOK_TIMEOUT_MS)
      .default(2_000)
      .describe(`Milliseconds the hook may take (at most ${MAX_HOOK_TIMEOUT_MS}).`),
  })
  .strict();
export type AdmissionHook = z.infer<typeof AdmissionHookSchema>;

/** One stage's hooks, asked in order: at most 16, none by default. */
const hookList = () => z.array(AdmissionHookSchema).max(16).default([]);

export const AdmissionConfigSchema = z
  .object({
    beforeTool: hookList().describe(
      'Asked in order before a call runs (after RBAC, before confirmation): allow, skip, deny, confirm or abort. ' +
        'No usable answer refuses the call.',
    ),
    afterTool: hookList().describe(
      'Asked in order after a call ran: keep or replace its result. No usable answer keeps it.',
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    uniqueHookNames(config.beforeTool, 'beforeTool', ctx);
    uniqueHookNames(config.afterTool, 'afterTool', ctx);
  });
export type AdmissionConfig = z.infer<typeof AdmissionConfigSchema>;

/**
 * The `admission` section of APPROVALS_CONFIG: before-hooks asked about every call submitted to the approvals API
 * (the client runs the tool itself, so there is no after-tool stage there).
 */
export const SubmissionAdmissionConfigSchema = z
  .object({
    beforeTool: hookList().describe(
      'Asked in order about each call submitted to the approvals API, before people are: allow (asked as usual), ' +
        'confirm (asked of the groups and quorum named), deny, skip or abort (decided `deny` at once). No usable ' +
        'answer decides it `deny`.',
    ),
  })
  .strict()
  .superRefine((config, ctx) => uniqueHookNames(config.beforeTool, 'beforeTool', ctx));
export type SubmissionAdmissionConfig = z.infer<typeof SubmissionAdmissionConfigSchema>;

function uniqueHookNames(hooks: readonly AdmissionHook[], stage: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  hooks.forEach((hook, i) => {
    if (seen.has(hook.name))
      ctx.addIssue({ code: 'custom', path: [stage, i, 'name'], message: `"${hook.name}" is used twice` });
    seen.add(hook.name);
  });
}

/** What a before-hook may answer. */
export const BeforeToolAnswerSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('allow') }).strict(),
  z.object({ action: z.literal('skip'), content: z.string().max(65_536) }).strict(),
  z.object({ action: z.literal('deny'), reason: z.string().min(1).max(1_000) }).strict(),
  z
    .object({
      action: z.literal('confirm'),
      groups: z.array(IdSchema).min(1).max(16).optional(),
      quorum: z.number().int().min(1).max(16).optional(),
    })
    .strict(),
  z.object({ action: z.literal('abort'), reason: z.string().min(1).max(1_000) }).strict(),
]);
export type BeforeToolAnswer = z.infer<typeof BeforeToolAnswerSchema>;

/** What an after-hook may answer: keep the result, or replace it (e.g. redacted). */
export const AfterToolAnswerSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('keep') }).strict(),
  z.object({ action: z.literal('replace'), result: z.unknown() }).strict(),
]);
export type AfterToolAnswer = z.infer<typeof AfterToolAnswerSchema>;

// The `confirmationHandler` of an agent's config: who decides a confirm-tier call in a person's place. Either rules
// (the first whose tools and conditions match approves or denies; none: ask people) or a hook (a signed POST, like the
// admission hooks, answering approve, deny or ask). It never decides a manual-only call, nor one a before-hook sent to
// people (libs/authorization's pipeline does not ask it then).
import { z } from 'zod';
import { IdSchema } from '@countersign/contracts';
import { AdmissionHookSchema, EnvNameSchema } from './admission-config.schema';

const ToolGlobsSchema = z
  .array(z.string().min(1).max(128))
  .min(1)
  .describe('Globs over tool names (`*` any run of characters, `?` one).');

const ArgValueSchema = z.union([z.string().max(1_000), z.number(), z.boolean(), z.null()]);

export const HandlerRuleSchema = z
  .object({
    name: IdSchema.describe('Names the rule in the audit and on the run’s stream.'),
    tools: ToolGlobsSchema,
    when: z
      .object({
        args: z
          .record(z.string().min(1).max(200), ArgValueSchema)
          .optional()
          .describe(
            'Dotted argument path → the value it must equal (a string, number, boolean or null), e.g. ' +
              '`{ "namespace": "staging" }`. Every one must hold.',
          ),
        env: z
          .record(EnvNameSchema, z.string().max(1_000))
          .optional()
          .describe(
            'Environment variable → the value it must have in the service, read at start-up, e.g. ' +
              '`{ "DEPLOY_ENV": "staging" }`. Every one must hold.',
          ),
      })
      .strict()
      .default({})
      .describe('Conditions, all of which must hold; none: the tools alone decide.'),
    decision: z.enum(['approve', 'deny']).describe('What the rule decides when it matches.'),
    reason: z
      .string()
      .min(1)
      .max(1_000)
      .optional()
      .describe('Told to the model with a deny, and audited with either decision.'),
  })
  .strict();
export type HandlerRule = z.infer<typeof HandlerRuleSchema>;

export const ConfirmationHandlerConfigSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z
        .literal('rules')
        .describe('`rules`: decided here by the first matching rule; `hook`: by an HTTP hook.'),
      name: IdSchema.describe('Names the handler: audited as `handler:<name>`.'),
      rules: z
        .array(HandlerRuleSchema)
        .min(1)
        .max(200)
        .describe('Tried in order; the first that matches decides.'),
    })
    .strict(),
  AdmissionHookSchema.extend({
    kind: z.literal('hook'),
    name: IdSchema.describe('Names the handler: audited as `handler:<name>`.'),
  }).strict(),
]);
export type ConfirmationHandlerConfig = z.infer<typeof ConfirmationHandlerConfigSchema>;

/** What a confirmation hook may answer. */
export const ConfirmationAnswerSchema = z.discriminatedUnion('decision', [
  z.object({ decision: z.literal('approve') }).strict(),
  z.object({ decision: z.literal('deny'), reason: z.string().min(1).max(1_000) }).strict(),
  z.object({ decision: z.literal('ask') }).strict(),
]);
export type ConfirmationAnswer = z.infer<typeof ConfirmationAnswerSchema>;
